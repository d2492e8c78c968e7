//! The walk behind [`graph_scores`]: a request's runs collected per
//! mention, the long ones left out (see [`GraphScores::unlisted`]), and
//! each tool's strongest paths kept as the rest stream past.

use super::*;

/// `sum / total` rounded up a little: a bound that the exact scores, added
/// up in another order, cannot exceed by a rounding.
/// What the runs left out (`left_out`, their sum) may add to a tool's
/// score when its own paths already cover `covered` of them.
pub(super) fn more(left_out: f32, covered: f32, total: f32) -> f32 {
    up((left_out - covered).max(0.0), total)
}

pub(super) fn up(sum: f32, total: f32) -> f32 {
    let share = if total > 0.0 { sum / total } else { sum };
    share * (1.0 + 1e-4) + 1e-6
}

impl<'a> GraphScores<'a> {
    /// The runs of every mention that counts (distinct evidence groups:
    /// mentions with the same IRI set count once), in order, into
    /// `self.runs`; the mentions as walked and the evidence total.
    pub(super) fn collect(
        &mut self,
        catalog: &'a Catalog,
        mentions: &'a [Mention],
        sources: Sources,
    ) -> (Vec<Group>, f32) {
        let explicit = sources.explicit;
        let mut seen_groups: HashSet<Vec<&str>> = HashSet::default();
        let mut total = 0.0_f32;
        // Surfaces are numbered in order of appearance.
        let mut surfaces: Vec<&str> = Vec::new();
        let mut groups: Vec<Group> = Vec::new();
        for (i, m) in mentions.iter().enumerate() {
            let context = i >= sources.context_from;
            let w_m = mention_weight(m.kind)
                * if i < explicit && m.kind == MentionKind::Verb {
                    EXPLICIT_VERB_WEIGHT
                } else if context {
                    sources.context_weight
                } else {
                    1.0
                };
            if w_m <= 0.0 || m.iris.is_empty() {
                continue;
            }
            let mut key: Vec<&str> = m.iris.iter().map(|r| r.iri.as_str()).collect();
            key.sort();
            if !seen_groups.insert(key) {
                continue;
            }
            total += w_m;
            let surface = m.surface.as_str();
            let surface_id = match surfaces.iter().position(|&s| s == surface) {
                Some(id) => id,
                None => {
                    surfaces.push(surface);
                    surfaces.len() - 1
                }
            };
            let stated = i < explicit;
            let first = self.runs.len();
            for (iri, r) in m.iris.iter().enumerate() {
                catalog.paths().walk(r.iri.as_str(), |run| {
                    let rarity = if matches!(run.relation, Relation::Verb | Relation::VerbBroader) {
                        1.0
                    } else {
                        catalog.idf(run.via).sqrt()
                    };
                    let weight =
                        w_m * r.weight.min(1.0) * relation_weight(run.relation, run.hops) * rarity;
                    self.runs.push(Run {
                        mention: surface,
                        stated,
                        context,
                        iri,
                        node: r.iri.as_str(),
                        via: run.via,
                        relation: run.relation,
                        hops: run.hops,
                        weight,
                        list: run,
                        deferred: false,
                    });
                });
            }
            groups.push(Group {
                left_out: 0.0,
                runs: (first, self.runs.len()),
                // (Fewer than 2^32 mentions.)
                walked: u32::try_from(groups.len() + 1).unwrap_or(u32::MAX),
                surface: surface_id,
                stated,
            });
        }
        (groups, total)
    }

    /// Leaves the long positive runs (at least `defer_from` links) out of
    /// the walk, and then every negative one too, so that what the walk
    /// adds up is positive evidence alone (a positive path left out may
    /// cancel a negative one: see [`Self::deferral`]); notes each
    /// mention's strongest positive run left out. Their sum, `None` when
    /// no run is long.
    pub(super) fn leave_out(&mut self, groups: &mut [Group], defer_from: usize) -> Option<f32> {
        let long = |r: &Run| r.weight >= 0.0 && r.list.len() >= defer_from;
        if !self.runs.iter().any(long) {
            return None;
        }
        for r in &mut self.runs {
            r.deferred = long(r) || r.weight < 0.0 || r.relation == Relation::Rival;
        }
        let mut sum = 0.0_f32;
        for g in groups {
            g.left_out = self
                .runs
                .get(g.runs.0..g.runs.1)
                .unwrap_or_default()
                .iter()
                .filter(|r| r.deferred && r.relation != Relation::Rival && r.weight > 0.0)
                .fold(0.0, |a, r| a.max(r.weight));
            sum += g.left_out;
        }
        Some(sum)
    }

    /// What the walk that left runs out keeps. The bound: a tool's score
    /// is the sum over mentions of its strongest positive path (none for a
    /// rival) and its strongest negative one (none when the surface has a
    /// positive path), over the evidence total. The negative parts are at
    /// most 0, and the walk (which left every negative run out) added up
    /// the strongest positive path of each mention among the runs walked;
    /// the strongest among every run is at most that plus the strongest
    /// positive run left out. So no score exceeds the walk's plus the sum,
    /// over mentions, of their strongest positive run left out.
    pub(super) fn deferral(
        &self,
        (groups, total, left_out): (Vec<Group>, f32, f32),
        scope: &Scope,
        (catalog, mentions, sources): (&'a Catalog, &'a [Mention], Sources),
    ) -> Deferred<'a> {
        let stated = groups.iter().any(|g| {
            g.stated
                && self
                    .runs
                    .get(g.runs.0..g.runs.1)
                    .unwrap_or_default()
                    .iter()
                    .any(|r| r.deferred && r.relation == Relation::Verb && r.weight > 0.0)
        });
        Deferred {
            groups,
            total,
            bound: up(left_out, total),
            left_out,
            stated,
            scope: scope.clone(),
            catalog,
            mentions,
            sources,
            done: RefCell::default(),
            by_list: OnceCell::new(),
        }
    }

    /// Offers one path to a tool (see [`Slot::offer`]), giving it a slot
    /// the first time.
    #[inline]
    pub(super) fn offer(
        &mut self,
        tool: usize,
        path: PathId,
        weight: f32,
        walked: u32,
        touched: &mut Vec<usize>,
        rival: bool,
    ) {
        let Some(at) = self.slot_of.get_mut(tool) else {
            return;
        };
        if *at == 0 {
            self.slots.push(Slot::new(tool as u32));
            // (Fewer slots than catalog tools.)
            *at = self.slots.len() as u32;
        }
        let slot = *at as usize - 1;
        let Some(s) = self.slots.get_mut(slot) else {
            return;
        };
        if s.offer(&self.runs, path, weight, walked, rival) {
            touched.push(slot);
        }
    }

    /// Notes, for each tool the mention touched, whether its strongest
    /// positive path for it is at least `left_out`, the mention's
    /// strongest run left out of the walk: then no run left out adds to
    /// its score for this mention.
    pub(super) fn cover(&mut self, touched: &[usize], left_out: f32) {
        for &slot in touched {
            if let Some(s) = self.slots.get_mut(slot)
                && s.positive.path != PathId::NONE
                && s.positive.weight >= left_out
            {
                s.covered += left_out;
            }
        }
    }

    /// Counts one mention into each tool it touched (see [`Slot::settle`]).
    pub(super) fn settle(
        &mut self,
        touched: &[usize],
        matched: &mut Matched,
        surface_id: usize,
        stated: bool,
    ) {
        for &slot in touched {
            if let Some(s) = self.slots.get_mut(slot) {
                s.settle(&self.runs, matched, surface_id, stated, &mut self.evidence);
            }
        }
    }
}

impl Slot {
    pub(super) fn new(tool: u32) -> Self {
        Self {
            tool,
            graph: ToolGraph::default(),
            mention: 0,
            positive: Strongest::NONE,
            negative: Strongest::NONE,
            rival: false,
            covered: 0.0,
        }
    }

    /// Offers one path for the mention numbered `walked`: kept when it is
    /// the tool's strongest of its sign for that mention (the first of
    /// equal weights; compared rarely: one list's paths share a weight,
    /// and a tool is on few lists). True when it is the mention's first
    /// path to the tool.
    #[inline]
    pub(super) fn offer(
        &mut self,
        runs: &[Run<'_>],
        path: PathId,
        weight: f32,
        walked: u32,
        rival: bool,
    ) -> bool {
        let first = self.mention != walked;
        if first {
            self.mention = walked;
            self.positive = Strongest::NONE;
            self.negative = Strongest::NONE;
            self.rival = false;
        }
        self.rival |= rival;
        let best = if weight >= 0.0 {
            &mut self.positive
        } else {
            &mut self.negative
        };
        let stronger = best.path == PathId::NONE
            || weight.abs() > best.weight.abs()
            || (weight.abs() == best.weight.abs() && earlier(runs, path, best.path));
        if stronger {
            *best = Strongest { weight, path };
        }
        first
    }

    /// Counts the mention walked last into the tool: its best positive
    /// path, then its worst negative one unless the surface has a positive
    /// path to the tool; each that counts is added to `evidence`.
    pub(super) fn settle(
        &mut self,
        runs: &[Run<'_>],
        matched: &mut Matched,
        surface_id: usize,
        stated: bool,
        evidence: &mut Vec<Evidence>,
    ) {
        let tool = self.tool as usize;
        for (positive, found) in [(true, self.positive), (false, self.negative)] {
            if found.path == PathId::NONE || (positive && self.rival) {
                continue;
            }
            let t = &mut self.graph;
            if positive {
                matched.mark(t, tool, surface_id);
            } else if !self.rival && matched.has(t, tool, surface_id) {
                continue;
            }
            t.reached = true;
            t.score += found.weight;
            t.stated_verb |= positive
                && stated
                && runs
                    .get(found.path.run())
                    .is_some_and(|r| r.relation == Relation::Verb);
            let previous = t.last;
            evidence.push(Evidence {
                path: found.path,
                positive,
                previous,
            });
            // (Fewer than u32::MAX entries: one per tool and mention.)
            t.last = u32::try_from(evidence.len()).unwrap_or(previous);
        }
    }
}
