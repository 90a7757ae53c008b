//! A minimal XML writer for responses: elements and text exactly as the service prints them
//! (no declaration, no indentation, `<a></a>` or `<a/>` as the caller asks), always
//! well-formed whatever the strings hold.

use std::fmt::Display;

use super::xml_tree::is_xml_char;

/// Builds one XML document as a string.
#[derive(Debug, Default)]
pub(crate) struct XmlWriter {
    out: String,
}

impl XmlWriter {
    /// `<name a="v" …>`.
    pub(crate) fn start(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.open_tag(name, attributes);
        self.out.push('>');
    }

    /// `</name>`.
    pub(crate) fn end(&mut self, name: &str) {
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
    }

    /// `<name a="v" …/>`.
    pub(crate) fn empty(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.open_tag(name, attributes);
        self.out.push_str("/>");
    }

    /// `<name>text</name>`, the text escaped.
    pub(crate) fn leaf(&mut self, name: &str, text: &str) {
        self.start(name, &[]);
        self.text(text);
        self.end(name);
    }

    /// `<name a="v" …>text</name>`.
    pub(crate) fn leaf_attributed(&mut self, name: &str, attributes: &[(&str, &str)], text: &str) {
        self.start(name, attributes);
        self.text(text);
        self.end(name);
    }

    /// `<name>value</name>` for anything printed with its `Display` form (numbers, spans).
    pub(crate) fn leaf_display(&mut self, name: &str, value: impl Display) {
        self.leaf(name, &value.to_string());
    }

    /// `<name>true</name>` / `<name>false</name>`.
    pub(crate) fn leaf_bool(&mut self, name: &str, value: bool) {
        self.leaf(name, if value { "true" } else { "false" });
    }

    /// `<name>text</name>` when there is a text.
    pub(crate) fn optional_leaf(&mut self, name: &str, text: Option<&str>) {
        if let Some(text) = text {
            self.leaf(name, text);
        }
    }

    /// Escaped character data.
    pub(crate) fn text(&mut self, text: &str) {
        for character in text.chars() {
            match character {
                '&' => self.out.push_str("&amp;"),
                '<' => self.out.push_str("&lt;"),
                '>' => self.out.push_str("&gt;"),
                // A raw CR would reach the reader as LF (end-of-line normalisation).
                '\r' => self.out.push_str("&#xD;"),
                other => self.push_char(other),
            }
        }
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn open_tag(&mut self, name: &str, attributes: &[(&str, &str)]) {
        self.out.push('<');
        self.out.push_str(name);
        for (attribute, value) in attributes {
            self.out.push(' ');
            self.out.push_str(attribute);
            self.out.push_str("=\"");
            self.attribute_value(value);
            self.out.push('"');
        }
    }

    fn attribute_value(&mut self, value: &str) {
        for character in value.chars() {
            match character {
                '&' => self.out.push_str("&amp;"),
                '<' => self.out.push_str("&lt;"),
                '"' => self.out.push_str("&quot;"),
                // Raw whitespace other than spaces would be normalised to spaces by the reader.
                '\t' => self.out.push_str("&#x9;"),
                '\n' => self.out.push_str("&#xA;"),
                '\r' => self.out.push_str("&#xD;"),
                other => self.push_char(other),
            }
        }
    }

    /// Characters XML cannot carry at all (controls, U+FFFE/FFFF) become U+FFFD, so that no
    /// string (an entity name from a URL, say) can make a response unreadable.
    fn push_char(&mut self, character: char) {
        self.out.push(if is_xml_char(character) {
            character
        } else {
            '\u{FFFD}'
        });
    }
}
