//! The sign-in page: a connection string, or a key name and key.

use maud::{Markup, html};

use super::layout::{Frame, page};

/// The sign-in form, with why the last attempt failed.
pub(crate) fn sign_in(error: Option<&str>) -> Markup {
    let frame = Frame {
        error,
        ..Frame::default()
    };
    page(
        "Sign in",
        &frame,
        html! {
            h1 { "Sign in" }
            p.muted { "With a connection string of the namespace, or one of its shared access keys." }
            form.card method="post" action="/explorer/sign-in" {
                label { "Connection string"
                    input type="password" name="connection_string" autocomplete="off"
                        placeholder="Endpoint=sb://…;SharedAccessKeyName=…;SharedAccessKey=…";
                }
                p.muted { "or" }
                label { "Key name" input type="text" name="key_name" value="RootManageSharedAccessKey"; }
                label { "Key" input type="password" name="key" autocomplete="off"; }
                button type="submit" { "Sign in" }
            }
        },
    )
}
