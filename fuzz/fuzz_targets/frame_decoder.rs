//! Fuzz target: the protocol-header parser and `FrameDecoder` on arbitrary bytes. Besides never
//! panicking, every frame that decodes must re-encode to bytes that decode to the same encoding.
#![no_main]

use busbar_amqp::frame::{
    AmqpFrame, Frame, FrameDecoder, ProtocolHeader, encode_amqp_frame, encode_sasl_frame,
};
use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;

fn reencode(frame: &Frame) -> BytesMut {
    let mut out = BytesMut::new();
    match frame {
        Frame::Amqp(AmqpFrame {
            channel,
            performative,
            payload,
        }) => encode_amqp_frame(*channel, performative, payload, &mut out),
        Frame::Sasl(sasl) => encode_sasl_frame(sasl, &mut out),
        Frame::Empty { .. } => {}
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let _ = ProtocolHeader::decode(&mut BytesMut::from(data));
    let mut decoder = FrameDecoder::new(64 * 1024);
    let mut buf = BytesMut::from(data);
    while let Ok(Some(frame)) = decoder.decode(&mut buf) {
        let first = reencode(&frame);
        if first.is_empty() {
            continue;
        }
        let again = FrameDecoder::new(u32::MAX)
            .decode(&mut first.clone())
            .expect("a re-encoded frame decodes")
            .expect("a re-encoded frame is complete");
        assert_eq!(reencode(&again), first, "encoding is stable");
    }
});
