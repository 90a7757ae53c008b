//! Fuzz target: the lazy message-section parser, every accessor, batch unpacking, the
//! header/annotations rewrite, the delivery rewrite (`for_delivery`) and the properties splice
//! (`with_properties`) on arbitrary bytes. A rewrite must keep every other section intact.
#![no_main]

use busbar_amqp::message::Message;
use busbar_amqp::types::Value;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let message = Message::from_bytes(Bytes::copy_from_slice(data));
    let header = message.header();
    let annotations = message.message_annotations();
    let properties = message.properties();
    let application_properties = message.application_properties();
    let body = message.body();
    let _ = message.delivery_annotations();
    let _ = message.footer();
    let _ = message.body_kind();
    if let Ok(batch) = message.batch() {
        for inner in batch {
            let _ = inner.properties();
            let _ = inner.body();
        }
    }
    if let Ok(Some(own)) = &properties
        && let Ok(spliced) = message.with_properties(own)
    {
        assert_eq!(spliced.header(), header);
        assert_eq!(spliced.application_properties(), application_properties);
        assert_eq!(spliced.body(), body);
    }
    let added = [("x-opt-sequence-number", Value::Long(1))];
    let delivery_header = header.clone().ok().flatten().unwrap_or_default();
    if let Ok(delivered) =
        message.for_delivery(&delivery_header, &["x-opt-locked-until"], added.iter())
    {
        assert_eq!(delivered.properties(), properties);
        assert_eq!(delivered.application_properties(), application_properties);
        assert_eq!(delivered.body(), body);
    }
    if let (Ok(header), Ok(annotations)) = (header, annotations) {
        let rewritten = message
            .rewrite(header.as_ref(), annotations.as_ref())
            .expect("a message that indexes can be rewritten");
        assert_eq!(rewritten.properties(), properties);
        assert_eq!(rewritten.application_properties(), application_properties);
        assert_eq!(rewritten.body(), body);
    }
});
