//! The namespace overview: every queue, topic and subscription with its counts, refreshed live.

use maud::{Markup, html};

use super::layout::{Frame, page};
use super::{SubQueue, entity_url};
use crate::explorer::{EntityCounts, EntityKind};

/// Rows `skip..skip + rows.len()` of `total`, `page_size` a page.
pub(crate) fn overview(
    frame: &Frame<'_>,
    rows: &[EntityCounts],
    skip: usize,
    total: usize,
    page_size: usize,
) -> Markup {
    page(
        "Namespace",
        frame,
        html! {
            h1 { "Namespace" }
            p.muted { (total) " entities; counts refresh every two seconds." }
            table #entities {
                thead { tr {
                    th { "Entity" } th { "Kind" }
                    th.n { "Active" } th.n { "Dead-letter" } th.n { "Scheduled" } th.n { "Deferred" }
                } }
                tbody {
                    @for row in rows {
                        tr {
                            td {
                                @if row.kind == EntityKind::Topic { (row.path) }
                                @else { a href=(entity_url(&row.path, SubQueue::Active, 1)) { (row.path) } }
                            }
                            td { (kind(row)) }
                            td.n data-count=(format!("{}|active", row.path)) { (row.active) }
                            td.n data-count=(format!("{}|deadLetter", row.path)) { (row.dead_letter) }
                            td.n data-count=(format!("{}|scheduled", row.path)) { (row.scheduled) }
                            td.n data-count=(format!("{}|deferred", row.path)) { (row.deferred) }
                        }
                    }
                }
            }
            p {
                @if skip > 0 {
                    a href=(format!("/explorer?skip={}", skip.saturating_sub(page_size))) { "← previous" } " "
                }
                @if skip + rows.len() < total {
                    a href=(format!("/explorer?skip={}", skip + page_size)) { "next →" }
                }
            }
        },
    )
}

fn kind(row: &EntityCounts) -> &'static str {
    match (row.kind, row.requires_session) {
        (EntityKind::Queue, false) => "queue",
        (EntityKind::Queue, true) => "queue (sessions)",
        (EntityKind::Topic, _) => "topic",
        (EntityKind::Subscription, false) => "subscription",
        (EntityKind::Subscription, true) => "subscription (sessions)",
    }
}
