//! One pass over a message's section boundaries: where each section starts and ends, found by
//! skipping values without decoding them.

use std::ops::Range;

use bytes::{Buf, Bytes};

use super::sections::{BodyKind, code};
use crate::error::DecodeError;
use crate::types::{Descriptor, Value, format, skip_value, take_u8};

/// Where one section lies in the message bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    /// The whole section: constructor, descriptor and value.
    pub(crate) section: Range<usize>,
    /// The section's value (after the descriptor).
    pub(crate) value: Range<usize>,
}

/// The sections of a message, located but not decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SectionIndex {
    pub(crate) header: Option<Span>,
    pub(crate) delivery_annotations: Option<Span>,
    pub(crate) message_annotations: Option<Span>,
    pub(crate) properties: Option<Span>,
    pub(crate) application_properties: Option<Span>,
    pub(crate) body: Vec<Span>,
    pub(crate) body_kind: Option<BodyKind>,
    pub(crate) footer: Option<Span>,
}

impl SectionIndex {
    /// Locates every section of `bytes`, checking that sections come in the order of §3.2, that
    /// none repeats (except `data` and `amqp-sequence` body sections) and that bodies do not mix.
    pub(crate) fn build(bytes: &Bytes) -> Result<Self, DecodeError> {
        let mut index = Self::default();
        let mut rest = bytes.clone();
        let mut last_rank = None;
        while !rest.is_empty() {
            let start = bytes.len() - rest.len();
            if take_u8(&mut rest)? != 0x00 {
                return Err(DecodeError::Malformed(
                    "message section (not a described value)",
                ));
            }
            // Senders write the descriptor as a smallulong; only other forms need decoding.
            let descriptor = match rest.get(..2) {
                Some(&[format::SMALLULONG, code]) => {
                    rest.advance(2);
                    Value::Ulong(u64::from(code))
                }
                _ => Value::decode(&mut rest)?,
            };
            let section_code = section_code(descriptor)?;
            let value_start = bytes.len() - rest.len();
            skip_value(&mut rest, 1)?;
            let end = bytes.len() - rest.len();
            let span = Span {
                section: start..end,
                value: value_start..end,
            };
            // Body sections share one rank; every other section has its own.
            let rank = if (code::DATA..=code::AMQP_VALUE).contains(&section_code) {
                code::DATA
            } else {
                section_code
            };
            let repeatable_body = matches!(
                (index.body_kind, section_code),
                (Some(BodyKind::Data), code::DATA)
                    | (Some(BodyKind::Sequence), code::AMQP_SEQUENCE)
            );
            if last_rank.is_some_and(|last| rank < last || (rank == last && !repeatable_body)) {
                return Err(DecodeError::Malformed("message section order"));
            }
            last_rank = Some(rank);
            let slot = match section_code {
                code::HEADER => &mut index.header,
                code::DELIVERY_ANNOTATIONS => &mut index.delivery_annotations,
                code::MESSAGE_ANNOTATIONS => &mut index.message_annotations,
                code::PROPERTIES => &mut index.properties,
                code::APPLICATION_PROPERTIES => &mut index.application_properties,
                code::FOOTER => &mut index.footer,
                body => {
                    index.body_kind = Some(match body {
                        code::DATA => BodyKind::Data,
                        code::AMQP_SEQUENCE => BodyKind::Sequence,
                        _ => BodyKind::Value,
                    });
                    index.body.push(span);
                    continue;
                }
            };
            *slot = Some(span);
        }
        Ok(index)
    }

    /// Where the sections that precede properties end: after the message-annotations, the
    /// delivery-annotations or the header, whichever comes last (0 when none is present).
    pub(crate) fn end_of_annotations(&self) -> usize {
        [
            &self.message_annotations,
            &self.delivery_annotations,
            &self.header,
        ]
        .into_iter()
        .find_map(|span| span.as_ref().map(|span| span.section.end))
        .unwrap_or(0)
    }
}

/// The section code of a descriptor given as a code or a symbolic name.
fn section_code(descriptor: Value) -> Result<u64, DecodeError> {
    let descriptor = match descriptor {
        Value::Ulong(code) => Descriptor::Code(code),
        Value::Symbol(name) => Descriptor::Symbol(name),
        other => Descriptor::Other(Box::new(other)),
    };
    (code::HEADER..=code::FOOTER)
        .zip(code::NAMES)
        .find(|(code, name)| descriptor.matches(*code, name))
        .map(|(code, _)| code)
        .ok_or_else(|| DecodeError::UnexpectedDescriptor(format!("{descriptor:?}")))
}
