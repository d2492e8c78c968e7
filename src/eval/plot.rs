//! Grouped bar chart of one metric across reports (SVG).

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::Report;
use crate::error::Error;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Writes a grouped bar chart of `metric` (any [`super::Metrics::get`]
/// name, e.g. `top1` or `ndcg10`) to `path` as SVG: one group per
/// dataset/setting, one bar per mode, value labels on the bars.
// crate::error::Error's size is shared crate-wide; boxing it is a crate decision
#[allow(clippy::result_large_err)]
pub fn plot_svg(reports: &[Report], metric: &str, path: &Path) -> crate::error::Result<()> {
    let mut groups: Vec<String> = Vec::new();
    let mut modes: Vec<String> = Vec::new();
    for r in reports {
        let g = format!("{}/{}", r.dataset, r.setting);
        if !groups.contains(&g) {
            groups.push(g);
        }
        if !modes.contains(&r.mode) {
            modes.push(r.mode.clone());
        }
    }
    if groups.is_empty() {
        return Err(Error::invalid("plot: no reports"));
    }
    let values: Vec<(usize, usize, f64)> = reports
        .iter()
        .filter_map(|r| {
            let g = groups
                .iter()
                .position(|x| *x == format!("{}/{}", r.dataset, r.setting))?;
            let m = modes.iter().position(|x| *x == r.mode)?;
            Some((g, m, r.overall.get(metric)?))
        })
        .collect();
    let y_max = values
        .iter()
        .map(|v| v.2)
        .fold(1.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let err = |e: &dyn std::fmt::Display| Error::invalid(format!("plot {}: {e}", path.display()));
    let width = (160 * groups.len() as u32 * modes.len().max(1) as u32 / 2).clamp(640, 2400);
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{metric} by dataset and mode"), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(48)
        .build_cartesian_2d(0f64..groups.len() as f64, 0f64..y_max * 1.25)
        .map_err(|e| err(&e))?;
    let group_label = |x: &f64| {
        let i = x.floor();
        if (x - i - 0.5).abs() < 1e-9 && i >= 0.0 {
            groups.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        .x_label_formatter(&group_label)
        .y_desc(metric)
        .draw()
        .map_err(|e| err(&e))?;
    let slot = 0.8 / modes.len().max(1) as f64;
    for (mi, mode) in modes.iter().enumerate() {
        let color = PALETTE.get(mi % PALETTE.len()).copied().unwrap_or(BLACK);
        let bars: Vec<(f64, f64)> = values
            .iter()
            .filter(|v| v.1 == mi)
            .map(|&(g, _, v)| (g as f64 + 0.1 + slot * mi as f64, v))
            .collect();
        chart
            .draw_series(
                bars.iter()
                    .map(|&(x, v)| Rectangle::new([(x, 0.0), (x + slot * 0.9, v)], color.filled())),
            )
            .map_err(|e| err(&e))?
            .label(mode.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
        chart
            .draw_series(bars.iter().map(|&(x, v)| {
                Text::new(
                    format!("{v:.3}"),
                    (x + slot * 0.45, v + y_max * 0.01),
                    TextStyle::from(("sans-serif", 11).into_font())
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )
            }))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Metrics;

    fn report(dataset: &str, mode: &str, top1: f64) -> Report {
        Report {
            dataset: dataset.into(),
            mode: mode.into(),
            setting: "global".into(),
            overall: Metrics {
                n: 1,
                n_empty_gold: 0,
                top1,
                r1: top1,
                r5: top1,
                r10: top1,
                mrr: top1,
                ndcg10: top1,
                primary_top1: None,
                abstain_rate: None,
                coverage: None,
                p50_ms: 0.0,
                p99_ms: 0.0,
            },
            per_tag: Default::default(),
        }
    }

    #[test]
    fn writes_svg_with_bars_and_labels() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("top1.svg");
        let reports = [
            report("metatool", "bm25", 0.381),
            report("metatool", "hybrid", 0.6),
            report("sealtools", "bm25", 0.893),
        ];
        plot_svg(&reports, "top1", &p).unwrap();
        let svg = std::fs::read_to_string(&p).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        for label in ["0.381", "0.600", "0.893", "metatool/global", "hybrid"] {
            assert!(svg.contains(label), "missing {label}");
        }
        assert!(plot_svg(&[], "top1", &p).is_err());
    }
}
