//! A message as a broker hands it out: a new header, and message-annotations spliced entry by
//! entry — the sender's own entries copied as bytes, the broker's written straight into the
//! output — so no annotations map is decoded, built or re-encoded per delivery.

use std::ops::Range;

use bytes::{BufMut, Bytes, BytesMut};

use super::Message;
use super::sections::{Header, code};
use crate::error::DecodeError;
use crate::types::{
    Composite, Value, compound_size, encode_compound_header, encode_ulong, encode_variable, format,
    skip_value, take_map, ulong_size, variable_size,
};

/// The nesting level of a map entry's key and value inside a message section.
const ENTRY_DEPTH: usize = 2;

impl Message {
    /// A copy of this message with `header` as its header and a message-annotations section
    /// holding the message's own annotations, minus those whose (symbol or string) key is in
    /// `dropped`, followed by `added` (symbol keys). The kept annotations are copied as bytes;
    /// delivery-annotations and every section after the annotations are copied untouched.
    pub fn for_delivery<'a, I>(
        &self,
        header: &Header,
        dropped: &[&str],
        added: I,
    ) -> Result<Message, DecodeError>
    where
        I: IntoIterator<Item = &'a (&'a str, Value)>,
        I::IntoIter: Clone,
    {
        let (head, rest) = self.for_delivery_parts(header, dropped, added)?;
        let mut out = BytesMut::with_capacity(head.len() + rest.len());
        out.put_slice(&head);
        out.put_slice(&rest);
        Ok(Message::from_bytes(out.freeze()))
    }

    /// [`for_delivery`](Message::for_delivery) in two parts, to be sent one after the other:
    /// the new header and annotations, then the sections after them as a slice of this
    /// message (not copied, however large the body).
    pub fn for_delivery_parts<'a, I>(
        &self,
        header: &Header,
        dropped: &[&str],
        added: I,
    ) -> Result<(Bytes, Bytes), DecodeError>
    where
        I: IntoIterator<Item = &'a (&'a str, Value)>,
        I::IntoIter: Clone,
    {
        let index = self.index()?;
        let delivery_annotations = index
            .delivery_annotations
            .as_ref()
            .map_or(&[][..], |span| &self.bytes[span.section.clone()]);
        let own = match &index.message_annotations {
            Some(span) => Some(take_map(&mut self.bytes.slice(span.value.clone()))?),
            None => None,
        };
        let (mut count, mut body) = (0, 0);
        if let Some((entries, len)) = &own {
            for entry in kept_entries(entries, *len, dropped) {
                count += 1;
                body += entry?.len();
            }
        }
        let added = added.into_iter();
        for (key, value) in added.clone() {
            count += 1;
            body += variable_size(key.len()) + value.encoded_size();
        }
        let rest = self.bytes.slice(index.end_of_annotations()..);
        let annotations_size = 1 + ulong_size(code::MESSAGE_ANNOTATIONS);
        let map_size = compound_size(count * 2, body).max(3);
        let mut out = BytesMut::with_capacity(
            header.encoded_size() + delivery_annotations.len() + annotations_size + map_size,
        );
        header.encode(&mut out);
        out.put_slice(delivery_annotations);
        out.put_u8(format::DESCRIBED);
        encode_ulong(code::MESSAGE_ANNOTATIONS, &mut out);
        encode_compound_header(true, count * 2, body, &mut out);
        if let Some((entries, len)) = &own {
            for entry in kept_entries(entries, *len, dropped) {
                out.put_slice(&entries[entry?]);
            }
        }
        for (key, value) in added {
            encode_variable(format::SYM8, format::SYM32, key.as_bytes(), &mut out);
            value.encode(&mut out);
        }
        Ok((out.freeze(), rest))
    }
}

/// Where each of the `count` entries of a map body lies in `entries`, for those whose key is
/// not one of `dropped`.
fn kept_entries<'a>(
    entries: &'a Bytes,
    count: usize,
    dropped: &'a [&str],
) -> impl Iterator<Item = Result<Range<usize>, DecodeError>> + 'a {
    let mut rest = entries.clone();
    (0..count).filter_map(move |_| {
        let start = entries.len() - rest.len();
        let entry = skip_value(&mut rest, ENTRY_DEPTH)
            .and_then(|()| skip_value(&mut rest, ENTRY_DEPTH))
            .map(|()| start..entries.len() - rest.len());
        match entry {
            Ok(range) => {
                let key = text_key(&entries[range.clone()]);
                let is_dropped = key.is_some_and(|key| dropped.iter().any(|d| d.as_bytes() == key));
                (!is_dropped).then_some(Ok(range))
            }
            Err(error) => Some(Err(error)),
        }
    })
}

/// The bytes of an entry's key when it is a symbol or a string (`None` for other key types).
fn text_key(entry: &[u8]) -> Option<&[u8]> {
    let (len, at): (usize, usize) = match *entry.first()? {
        format::SYM8 | format::STR8 => (usize::from(*entry.get(1)?), 2),
        format::SYM32 | format::STR32 => {
            let len: [u8; 4] = entry.get(1..5)?.try_into().ok()?;
            (usize::try_from(u32::from_be_bytes(len)).ok()?, 5)
        }
        _ => return None,
    };
    entry.get(at..at.checked_add(len)?)
}
