//! Calibrated confidence: a logistic model over the match's channel scores
//! and its margin over the best other candidate, fit on dev data
//! (`toolgraph calibrate`) by L2-regularised gradient descent.

use super::ScoreDetails;
use serde::{Deserialize, Serialize};

/// Number of features: bias, dense, graph, saturated BM25, margin.
const F: usize = 5;

/// Logistic-regression weights over [`Calibration::features`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub weights: [f32; F],
}

impl Default for Calibration {
    /// Fit with `toolgraph calibrate` on MetaTool awareness + reliability +
    /// 1,000 single-tool queries, 500 BFCL-multiple (candidates) and 300
    /// Seal-Tools queries (dev data; 3,835 samples, log-loss 0.336,
    /// ECE 0.030); see README "Confidence".
    fn default() -> Self {
        Self {
            weights: [-4.141, 5.453, 1.831, 2.177, 3.866],
        }
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Calibration {
    /// Features of a match given the best other candidate's details.
    pub fn features(m: &ScoreDetails, other: Option<&ScoreDetails>) -> [f32; F] {
        let margin = match other {
            Some(o) => (m.fused - o.fused).clamp(-1.0, 1.0),
            None => 0.5,
        };
        let lex = m.bm25 / (m.bm25 + 5.0);
        [1.0, m.dense, m.graph, lex, margin]
    }

    /// Probability that this match is a right tool.
    pub fn confidence(&self, m: &ScoreDetails, other: Option<&ScoreDetails>) -> f32 {
        if m.exact_name {
            return 0.99;
        }
        let x = Self::features(m, other);
        let z: f32 = self.weights.iter().zip(x.iter()).map(|(w, v)| w * v).sum();
        sigmoid(z)
    }
}

/// One bin of a reliability curve.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReliabilityBin {
    pub lo: f32,
    pub hi: f32,
    pub count: usize,
    pub mean_confidence: f32,
    pub accuracy: f32,
}

/// What a calibration fit measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CalibrationReport {
    pub calibration: Calibration,
    pub samples: usize,
    pub positives: usize,
    pub log_loss: f32,
    /// Expected calibration error over 10 equal-width bins.
    pub ece: f32,
    pub bins: Vec<ReliabilityBin>,
}

/// Fits the logistic model to (features, correct) samples.
pub fn fit_calibration(samples: &[([f32; F], bool)]) -> CalibrationReport {
    let mut w = Calibration::default().weights;
    let n = samples.len().max(1) as f32;
    let lambda = 1e-3_f32;
    let mut lr = 0.5_f32;
    for epoch in 0..3000 {
        let mut grad = [0.0_f32; F];
        for (x, y) in samples {
            let z: f32 = w.iter().zip(x).map(|(a, b)| a * b).sum();
            let err = sigmoid(z) - if *y { 1.0 } else { 0.0 };
            for k in 0..F {
                grad[k] += err * x[k] / n;
            }
        }
        for k in 0..F {
            let reg = if k == 0 { 0.0 } else { lambda * w[k] };
            w[k] -= lr * (grad[k] + reg);
        }
        if epoch == 1500 {
            lr *= 0.5;
        }
    }
    let calibration = Calibration { weights: w };
    report(calibration, samples)
}

fn report(calibration: Calibration, samples: &[([f32; F], bool)]) -> CalibrationReport {
    let mut bins: Vec<(usize, f32, usize)> = vec![(0, 0.0, 0); 10];
    let mut loss = 0.0_f32;
    for (x, y) in samples {
        let z: f32 = calibration.weights.iter().zip(x).map(|(a, b)| a * b).sum();
        let p = sigmoid(z).clamp(1e-6, 1.0 - 1e-6);
        loss -= if *y { p.ln() } else { (1.0 - p).ln() };
        let b = ((p * 10.0) as usize).min(9);
        if let Some(bin) = bins.get_mut(b) {
            bin.0 += 1;
            bin.1 += p;
            bin.2 += usize::from(*y);
        }
    }
    let n = samples.len().max(1) as f32;
    let mut ece = 0.0;
    let bins = bins
        .into_iter()
        .enumerate()
        .map(|(i, (count, sum_p, correct))| {
            let c = count.max(1) as f32;
            let mean_confidence = sum_p / c;
            let accuracy = correct as f32 / c;
            ece += (count as f32 / n) * (mean_confidence - accuracy).abs();
            ReliabilityBin {
                lo: i as f32 / 10.0,
                hi: (i + 1) as f32 / 10.0,
                count,
                mean_confidence,
                accuracy,
            }
        })
        .collect();
    CalibrationReport {
        calibration,
        samples: samples.len(),
        positives: samples.iter().filter(|s| s.1).count(),
        log_loss: loss / n,
        ece,
        bins,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_separates_a_separable_set_and_reports_bins() {
        // correct iff dense > 0.5
        let samples: Vec<([f32; F], bool)> = (0..200)
            .map(|i| {
                let d = i as f32 / 200.0;
                ([1.0, d, 0.0, 0.0, 0.0], d > 0.5)
            })
            .collect();
        let r = fit_calibration(&samples);
        let c = r.calibration;
        let hi = ScoreDetails {
            dense: 0.9,
            ..Default::default()
        };
        let lo = ScoreDetails {
            dense: 0.1,
            ..Default::default()
        };
        // margin feature is 0.5 without `other`; the weights still order them
        assert!(c.confidence(&hi, Some(&hi)) > 0.8);
        assert!(c.confidence(&lo, Some(&lo)) < 0.2);
        assert_eq!(r.bins.iter().map(|b| b.count).sum::<usize>(), 200);
        assert_eq!(r.positives, 99);
        assert!(r.ece < 0.15, "ece {}", r.ece);
    }

    #[test]
    fn exact_name_is_near_certain() {
        let m = ScoreDetails {
            exact_name: true,
            ..Default::default()
        };
        assert!(Calibration::default().confidence(&m, None) > 0.95);
    }
}
