//! The frame of every explorer page: title, header with sign-out, notices, and the live-count
//! script's source.

use maud::{DOCTYPE, Markup, html};

/// What the frame shows around a page's content.
#[derive(Debug, Default)]
pub(crate) struct Frame<'a> {
    /// The signed-in session's CSRF token (none on the sign-in page).
    pub(crate) csrf: Option<&'a str>,
    /// A message about the last action.
    pub(crate) notice: Option<&'a str>,
    /// What went wrong.
    pub(crate) error: Option<&'a str>,
    /// The JSON the live counts are polled from.
    pub(crate) counts_url: Option<String>,
}

/// A whole page.
pub(crate) fn page(title: &str, frame: &Frame<'_>, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Busbar explorer" }
                link rel="stylesheet" href="/explorer/assets/explorer.css";
            }
            body data-counts-url=[frame.counts_url.as_deref()] {
                header {
                    a href="/explorer" { "Busbar explorer" }
                    @if let Some(csrf) = frame.csrf {
                        form method="post" action="/explorer/sign-out" {
                            input type="hidden" name="csrf" value=(csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
                main {
                    @if let Some(notice) = frame.notice { p.notice role="status" { (notice) } }
                    @if let Some(error) = frame.error { p.error role="alert" { (error) } }
                    (content)
                }
                script src="/explorer/assets/explorer.js" {}
            }
        }
    }
}

/// A page with nothing but the frame's notices (a refusal).
pub(crate) fn error_page(frame: &Frame<'_>) -> Markup {
    page(
        "Error",
        frame,
        html! { p { a href="/explorer" { "Back to the namespace" } } },
    )
}

/// A Unix-millisecond time as UTC text (`2026-01-02T03:04:05Z`).
pub(crate) fn time(unix_millis: i64) -> String {
    crate::atom::Timestamp::from_unix_millis(unix_millis).to_atom_string()
}
