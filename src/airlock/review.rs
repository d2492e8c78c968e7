//! The review queue: items, approval and rejection. Each decision writes
//! the item first and the catalog second, so a crash in between leaves a
//! record that [`Airlock::heal`] carries through at the next start: an
//! approval rolls forward (the tool is registered), a rejection too (the
//! tool is unloaded).

use super::model::{Approval, Health, PendingTool, Review, Status, store_source};
use super::{Airlock, fetch};
use crate::error::{Error, Field, Kind, Result};
use crate::policy::limits::{UsagePolicy, now};

impl Airlock {
    /// Review items, optionally of one status, worst screening severity
    /// first, then newest change.
    pub fn items(&self, status: Option<Status>) -> Vec<PendingTool> {
        self.items_page(status, 0, usize::MAX).0
    }

    /// One page of the review items with `status` (all: `None`), worst
    /// screening severity first, then most recently updated, and how many
    /// there are in all. Only the page is copied.
    pub fn items_page(
        &self,
        status: Option<Status>,
        offset: usize,
        limit: usize,
    ) -> (Vec<PendingTool>, usize) {
        let state = self.lock();
        let mut all: Vec<&PendingTool> = state
            .items
            .values()
            .filter(|i| status.is_none_or(|s| i.status == s))
            .collect();
        // Worst screening first, then the most recent change.
        all.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(b.updated_at.cmp(&a.updated_at))
                .then(a.id.cmp(&b.id))
        });
        let total = all.len();
        let page = all.into_iter().skip(offset).take(limit).cloned().collect();
        (page, total)
    }

    pub fn item(&self, id: &str) -> Result<PendingTool> {
        self.lock()
            .items
            .get(id)
            .cloned()
            .ok_or_else(|| Error::not_found(Kind::ReviewItem, id))
    }

    /// Approves an item: registers it (searchable from now on) with its
    /// usage policy and health check, and pins its content.
    pub fn approve(&self, id: &str, approval: Approval, by: &str) -> Result<PendingTool> {
        let _one = self.one_change();
        let before = self.item(id)?;
        if before.status == Status::Missing {
            return Err(Error::Conflict(format!(
                "`{}` is no longer offered by its source: rescan it first",
                before.name
            )));
        }
        if before.status == Status::Approved {
            return Err(Error::Conflict(format!(
                "`{}` is approved already",
                before.name
            )));
        }
        if let Some(h) = &approval.health_url {
            if !fetch::is_url(h) {
                return Err(Error::invalid_field(
                    Field::ApprovalHealthUrl,
                    "a health check is an http(s) URL",
                ));
            }
            self.options.reach.check_url(h, Field::ApprovalHealthUrl)?;
        }
        let override_reason = blocked_override(&before, approval.override_reason.as_deref())?;
        let categories = self.engine.category_iris(&approval.categories)?;
        // Checked before anything is written.
        let policy = self.engine.check_usage_policy(&UsagePolicy {
            rate_limit: approval.rate_limit,
            budget: approval.budget,
            access: approval.access,
            cost_per_call: approval.cost_per_call,
        })?;
        let health_url = approval.health_url.or_else(|| {
            self.lock()
                .sources
                .get(&before.source)
                .and_then(|s| s.health_url.clone())
        });
        let mut item = before.clone();
        item.health = health_url.map(|url| Health {
            url,
            active: true,
            ..Health::default()
        });
        item.status = Status::Approved;
        if !categories.is_empty() {
            item.categories = categories;
        }
        item.pinned = Some(item.content.clone());
        item.pinned_hash = Some(item.hash.clone());
        item.diff.clear();
        item.policy = (!policy.is_empty()).then(|| policy.clone());
        item.review = Some(Review {
            action: "approved".into(),
            by: by.to_string(),
            at: now(),
            reason: None,
            override_reason,
        });
        item.updated_at = now();
        self.engine
            .set_usage_policy(&item.name, item.policy.clone())?;
        self.engine.set_inactive(&item.name, None)?;
        self.save_items(std::slice::from_ref(&item))?;
        let registered = self.engine.register_tools(
            &store_source(&item.source, &item.name),
            vec![item.registered()],
        );
        if let Err(e) = registered {
            // The tool cannot be registered (a constraint, the store): the
            // approval did not happen.
            self.save_items(std::slice::from_ref(&before))?;
            self.engine
                .set_usage_policy(&before.name, before.policy.clone())?;
            return Err(e);
        }
        Ok(item)
    }

    /// Rejects an item (an approved one leaves search); it stays rejected
    /// across rescans until its content changes. Whatever the item's state,
    /// the catalog holds no tool for it afterwards.
    pub fn reject(&self, id: &str, reason: &str, by: &str) -> Result<PendingTool> {
        if reason.trim().is_empty() {
            return Err(Error::invalid_field(
                Field::RejectReason,
                "say why the tool is rejected",
            ));
        }
        let _one = self.one_change();
        let mut item = self.item(id)?;
        item.status = Status::Rejected;
        item.review = Some(Review {
            action: "rejected".into(),
            by: by.to_string(),
            at: now(),
            reason: Some(reason.trim().chars().take(2_000).collect()),
            override_reason: None,
        });
        item.updated_at = now();
        self.save_items(std::slice::from_ref(&item))?;
        self.catalog_write(|| {
            self.engine
                .unload_sources(&[store_source(&item.source, &item.name)])
        })?;
        Ok(item)
    }
}

/// The recorded override of an approval: `None` for an item without a
/// `block` finding; for one with, the reason given (with the codes it
/// overrides), or an error naming `override_reason` when none is.
fn blocked_override(item: &PendingTool, given: Option<&str>) -> Result<Option<String>> {
    use crate::screen::Severity;
    let blocking: Vec<&str> = item
        .reasons
        .iter()
        .filter(|r| r.severity == Severity::Block)
        .map(|r| r.code.as_str())
        .collect();
    if blocking.is_empty() {
        return Ok(None);
    }
    let given = given.map(str::trim).filter(|g| !g.is_empty());
    let Some(reason) = given else {
        return Err(Error::invalid_field(
            Field::ApprovalOverride,
            format!(
                "`{}` has findings that block approval ({}): approve with `override_reason` saying why it is safe",
                item.name,
                blocking.join(", ")
            ),
        ));
    };
    let reason: String = reason.chars().take(2_000).collect();
    Ok(Some(format!(
        "{reason} (overrides: {})",
        blocking.join(", ")
    )))
}
