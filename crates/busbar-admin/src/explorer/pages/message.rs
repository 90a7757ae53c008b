//! One message: system and application properties, dead-letter reason, and the body as text,
//! JSON and hex.

use maud::{Markup, html};

use super::layout::{Frame, page, time};
use super::{SubQueue, entity_url};
use crate::explorer::PeekedMessage;

/// The page of `message` of `path`'s `sub_queue`.
pub(crate) fn message(
    frame: &Frame<'_>,
    path: &str,
    sub_queue: SubQueue,
    message: &PeekedMessage,
) -> Markup {
    let title = format!("{path} #{}", message.sequence_number);
    let json = serde_json::from_slice::<serde_json::Value>(&message.body)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok());
    page(
        &title,
        frame,
        html! {
            p { a href=(entity_url(path, sub_queue, message.sequence_number)) { "← " (path) } }
            h1 { "Message " (message.sequence_number) }
            div.row {
                table #system-properties {
                    tbody {
                        tr { th { "Sequence number" } td { (message.sequence_number) } }
                        tr { th { "State" } td { (message.state) } }
                        tr { th { "Enqueued" } td { (time(message.enqueued_time)) } }
                        tr { th { "Delivery count" } td { (message.delivery_count) } }
                        @if let Some(at) = message.scheduled_enqueue_time { tr { th { "Scheduled for" } td { (time(at)) } } }
                        @if let Some(at) = message.expires_at { tr { th { "Expires" } td { (time(at)) } } }
                        @for (name, value) in &message.system_properties { tr { th { (name) } td { (value) } } }
                        @if let Some(reason) = &message.dead_letter_reason { tr { th { "Dead-letter reason" } td #dead-letter-reason { (reason) } } }
                        @if let Some(description) = &message.dead_letter_description { tr { th { "Dead-letter description" } td { (description) } } }
                    }
                }
                table #application-properties {
                    thead { tr { th { "Application property" } th { "Value" } } }
                    tbody { @for (name, value) in &message.application_properties { tr { td { (name) } td { (value) } } } }
                }
            }
            h2 { "Body (" (message.body.len()) " bytes)" }
            details open { summary { "Text" } pre #body-text { (String::from_utf8_lossy(&message.body)) } }
            details open[json.is_some()] {
                summary { "JSON" }
                pre #body-json { (json.as_deref().unwrap_or("(not JSON)")) }
            }
            details { summary { "Hex" } pre #body-hex { (hex_dump(&message.body)) } }
        },
    )
}

/// 16 bytes a line: offset, hex, and the printable ASCII.
fn hex_dump(bytes: &[u8]) -> String {
    bytes
        .chunks(16)
        .enumerate()
        .map(|(line, chunk)| {
            let hex: Vec<String> = chunk.iter().map(|byte| format!("{byte:02x}")).collect();
            let ascii: String = chunk
                .iter()
                .map(|&byte| {
                    if byte.is_ascii_graphic() || byte == b' ' {
                        char::from(byte)
                    } else {
                        '.'
                    }
                })
                .collect();
            format!("{:08x}  {:<47}  {ascii}\n", line * 16, hex.join(" "))
        })
        .collect()
}
