//! Untrusted XML into a small namespace-resolved element tree, with hard bounds: no DTD (so no
//! entity declarations and no expansion), only the five predefined entities and character
//! references, a size, depth and element-count limit. The descriptions are then read from the
//! tree by local name and namespace URI, in any order.

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

use super::error::AtomError;
use super::namespaces::XML_SCHEMA_INSTANCE;

/// Largest request body the parser reads. Descriptions are a few kilobytes; SQL expressions
/// and user metadata are capped at about 1 KiB by the service.
pub const MAX_DOCUMENT_BYTES: usize = 1 << 20;
/// Deepest element nesting accepted (a subscription's default rule's typed value is at 8).
pub const MAX_DEPTH: usize = 32;
/// Most elements accepted in one body.
pub const MAX_ELEMENTS: usize = 10_000;

/// One element: its resolved name, attributes, child elements and the text directly inside it.
#[derive(Debug, Default)]
pub(crate) struct Element {
    namespace: Option<String>,
    local_name: String,
    attributes: Vec<Attribute>,
    children: Vec<Element>,
    text: String,
}

/// A non-namespace-declaration attribute, its name resolved.
#[derive(Debug)]
struct Attribute {
    namespace: Option<String>,
    local_name: String,
    value: String,
}

impl Element {
    /// Parses a whole document into its root element.
    pub(crate) fn parse_document(input: &[u8]) -> Result<Element, AtomError> {
        if input.len() > MAX_DOCUMENT_BYTES {
            return Err(AtomError::TooLarge {
                limit: MAX_DOCUMENT_BYTES,
            });
        }
        let text = std::str::from_utf8(input).map_err(|_| AtomError::NotUtf8)?;
        TreeBuilder::default().build(text.strip_prefix('\u{feff}').unwrap_or(text))
    }

    /// The element's namespace URI, if it has one.
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The element's local name.
    pub(crate) fn local_name(&self) -> &str {
        &self.local_name
    }

    /// Whether the element is `local_name` in `namespace`.
    pub(crate) fn is(&self, namespace: &str, local_name: &str) -> bool {
        self.local_name == local_name && self.namespace.as_deref() == Some(namespace)
    }

    /// The child elements in `namespace`, in document order (others are not ours to read).
    pub(crate) fn children_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children
            .iter()
            .filter(move |child| child.namespace.as_deref() == Some(namespace))
    }

    /// The first child `local_name` in `namespace`.
    pub(crate) fn child(&self, namespace: &str, local_name: &str) -> Option<&Element> {
        self.children
            .iter()
            .find(|child| child.is(namespace, local_name))
    }

    /// The text directly inside the element, entities resolved.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The local part of the element's `xsi:type` (`SqlFilter` from `p4:type="SqlFilter"`,
    /// `int` from `i:type="d6p1:int"`): the SDKs bind the prefixes differently, and the
    /// service's own clients compare only the part after the colon.
    pub(crate) fn schema_type(&self) -> Option<&str> {
        let value = self
            .attributes
            .iter()
            .find(|a| {
                a.local_name == "type" && a.namespace.as_deref() == Some(XML_SCHEMA_INSTANCE)
            })?
            .value
            .as_str();
        Some(value.rsplit_once(':').map_or(value, |(_, local)| local))
    }
}

/// The state of one parse: the open elements and how many elements were seen.
#[derive(Default)]
struct TreeBuilder {
    open: Vec<Element>,
    root: Option<Element>,
    elements_seen: usize,
}

impl TreeBuilder {
    fn build(mut self, text: &str) -> Result<Element, AtomError> {
        let mut reader = NsReader::from_str(text);
        loop {
            match reader.read_event().map_err(malformed)? {
                Event::Start(start) => {
                    let element = self.open_element(&reader, &start)?;
                    if self.open.len() >= MAX_DEPTH {
                        return Err(AtomError::TooDeep { limit: MAX_DEPTH });
                    }
                    self.open.push(element);
                }
                Event::Empty(start) => {
                    let element = self.open_element(&reader, &start)?;
                    self.close(element)?;
                }
                Event::End(_) => {
                    // The reader checks that end tags match their start tags.
                    let element = self.open.pop().ok_or_else(|| unbalanced("an end tag"))?;
                    self.close(element)?;
                }
                Event::Text(text) => self.push_text(&text.xml10_content())?,
                Event::CData(data) => self.push_text(&data.into_inner())?,
                Event::GeneralRef(reference) => {
                    let character = match reference.resolve_char_ref().map_err(malformed)? {
                        Some(character) => character,
                        None => predefined_entity(&reference)?,
                    };
                    self.push_text(character.encode_utf8(&mut [0; 4]))?;
                }
                Event::DocType(_) => return Err(AtomError::DocumentType),
                Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
                Event::Eof => break,
            }
        }
        if !self.open.is_empty() {
            return Err(unbalanced("the end of the document inside an element"));
        }
        self.root.ok_or(AtomError::Malformed {
            reason: "no root element".to_owned(),
        })
    }

    /// A new element from a start (or empty-element) tag; the reader has already put its
    /// namespace declarations in scope.
    fn open_element(
        &mut self,
        reader: &NsReader<&[u8]>,
        start: &BytesStart<'_>,
    ) -> Result<Element, AtomError> {
        self.elements_seen += 1;
        if self.elements_seen > MAX_ELEMENTS {
            return Err(AtomError::TooManyElements {
                limit: MAX_ELEMENTS,
            });
        }
        let (namespace, local_name) = reader.resolver().resolve_element(start.name());
        let mut element = Element {
            namespace: bound_namespace(namespace)?,
            local_name: local_name.as_ref().to_owned(),
            ..Element::default()
        };
        for attribute in start.attributes() {
            let attribute = attribute.map_err(malformed)?;
            if attribute.key.as_namespace_binding().is_some() {
                continue;
            }
            let (namespace, local_name) = reader.resolver().resolve_attribute(attribute.key);
            let value = attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(malformed)?;
            check_characters(&value)?;
            element.attributes.push(Attribute {
                namespace: bound_namespace(namespace)?,
                local_name: local_name.as_ref().to_owned(),
                value: value.into_owned(),
            });
        }
        Ok(element)
    }

    /// Attaches a finished element to its parent, or makes it the root.
    fn close(&mut self, element: Element) -> Result<(), AtomError> {
        match self.open.last_mut() {
            Some(parent) => parent.children.push(element),
            None if self.root.is_none() => self.root = Some(element),
            None => return Err(unbalanced("a second root element")),
        }
        Ok(())
    }

    fn push_text(&mut self, text: &str) -> Result<(), AtomError> {
        check_characters(text)?;
        match self.open.last_mut() {
            Some(element) => element.text.push_str(text),
            None if text.trim().is_empty() => {}
            None => return Err(unbalanced("text outside the root element")),
        }
        Ok(())
    }
}

/// The namespace URI of a resolved name; an undeclared prefix is an error.
fn bound_namespace(resolved: ResolveResult<'_>) -> Result<Option<String>, AtomError> {
    match resolved {
        ResolveResult::Bound(namespace) => Ok(Some(namespace.as_ref().to_owned())),
        ResolveResult::Unbound => Ok(None),
        ResolveResult::Unknown(prefix) => Err(AtomError::Malformed {
            reason: format!("undeclared namespace prefix '{prefix}'"),
        }),
    }
}

/// The five entities XML predefines; nothing else is ever expanded.
fn predefined_entity(name: &str) -> Result<char, AtomError> {
    match name {
        "lt" => Ok('<'),
        "gt" => Ok('>'),
        "amp" => Ok('&'),
        "apos" => Ok('\''),
        "quot" => Ok('"'),
        _ => Err(AtomError::UndefinedEntity {
            name: name.chars().take(64).collect(),
        }),
    }
}

/// Refuses characters XML 1.0 does not allow (controls, U+FFFE, U+FFFF), raw or referenced:
/// they could not be written back.
fn check_characters(text: &str) -> Result<(), AtomError> {
    match text.chars().find(|&character| !is_xml_char(character)) {
        None => Ok(()),
        Some(character) => Err(AtomError::Malformed {
            reason: format!(
                "the character U+{:04X} is not allowed in XML",
                u32::from(character)
            ),
        }),
    }
}

/// Whether XML 1.0 allows the character in a document (§2.2 `Char`).
pub(crate) fn is_xml_char(character: char) -> bool {
    matches!(character, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        || character >= '\u{10000}'
}

fn malformed(error: impl std::fmt::Display) -> AtomError {
    AtomError::Malformed {
        reason: error.to_string(),
    }
}

fn unbalanced(what: &str) -> AtomError {
    AtomError::Malformed {
        reason: format!("unexpected {what}"),
    }
}
