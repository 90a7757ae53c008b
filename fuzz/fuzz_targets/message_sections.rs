//! Fuzz target: the lazy message-section parser, every accessor, batch unpacking and the
//! header/annotations rewrite on arbitrary bytes. A rewrite must keep every other section intact.
#![no_main]

use busbar_amqp::message::Message;
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
    if let (Ok(header), Ok(annotations)) = (header, annotations) {
        let rewritten = message
            .rewrite(header.as_ref(), annotations.as_ref())
            .expect("a message that indexes can be rewritten");
        assert_eq!(rewritten.properties(), properties);
        assert_eq!(rewritten.application_properties(), application_properties);
        assert_eq!(rewritten.body(), body);
    }
});
