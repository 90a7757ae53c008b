//! JSON with comments: blanks out `//` and `/* */` comments (outside strings) so plain JSON remains.
//!
//! The emulator's shipped `Config.json` has `//` lines inside an object. Comments become spaces
//! and newlines are kept, so the JSON parser's line and column numbers still point into the
//! file as written. A leading byte-order mark, which Windows editors add, is dropped likewise.

/// An unterminated `/*` comment, at this 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct UnterminatedComment {
    pub(super) line: usize,
    pub(super) column: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    String,
    StringEscape,
    LineComment,
    BlockComment,
}

/// Returns `text` with every comment replaced by spaces (newlines kept).
pub(super) fn strip_comments(text: &str) -> Result<String, UnterminatedComment> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    let mut state = State::Code;
    let (mut line, mut column) = (1, 0);
    let mut block_start = UnterminatedComment { line, column };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            line += 1;
            column = 0;
        } else {
            column += 1;
        }
        let blank = |out: &mut String| out.push(if c == '\n' { '\n' } else { ' ' });
        state = match state {
            State::Code if c == '/' && chars.peek() == Some(&'/') => {
                blank(&mut out);
                State::LineComment
            }
            State::Code if c == '/' && chars.peek() == Some(&'*') => {
                block_start = UnterminatedComment { line, column };
                blank(&mut out);
                chars.next();
                column += 1;
                out.push(' ');
                State::BlockComment
            }
            State::Code => {
                out.push(c);
                if c == '"' { State::String } else { State::Code }
            }
            State::String => {
                out.push(c);
                match c {
                    '\\' => State::StringEscape,
                    '"' => State::Code,
                    _ => State::String,
                }
            }
            State::StringEscape => {
                out.push(c);
                State::String
            }
            State::LineComment => {
                blank(&mut out);
                if c == '\n' {
                    State::Code
                } else {
                    State::LineComment
                }
            }
            State::BlockComment if c == '*' && chars.peek() == Some(&'/') => {
                blank(&mut out);
                chars.next();
                column += 1;
                out.push(' ');
                State::Code
            }
            State::BlockComment => {
                blank(&mut out);
                State::BlockComment
            }
        };
    }
    if state == State::BlockComment {
        return Err(block_start);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_comments_and_keeps_positions() {
        let text = "{ // note\n  \"a\": 1 /* x\n y */, \"b\": 2 }";
        let stripped = strip_comments(text).unwrap();
        assert_eq!(stripped, "{        \n  \"a\": 1     \n     , \"b\": 2 }");
        assert_eq!(stripped.len(), text.len());
        let value: serde_json::Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(value, serde_json::json!({"a": 1, "b": 2}));
    }

    #[test]
    fn leaves_comment_markers_inside_strings_alone() {
        for text in [
            r#"{"url": "https://aka.ms/x"}"#,
            r#"{"a": "/* not a comment */"}"#,
            r#"{"a": "quote \" // still string"}"#,
            r#"{"a": "backslash \\"} "#,
        ] {
            assert_eq!(strip_comments(text).unwrap(), text);
        }
        assert_eq!(
            strip_comments("{\"a\": \"\\\\\"} // c").unwrap(),
            "{\"a\": \"\\\\\"}     "
        );
    }

    #[test]
    fn a_comment_may_end_the_file_without_a_newline() {
        assert_eq!(strip_comments("1 // end").unwrap(), "1       ");
        assert_eq!(strip_comments("1 /**/").unwrap(), "1     ");
    }

    #[test]
    fn drops_a_byte_order_mark() {
        assert_eq!(strip_comments("\u{feff}{}").unwrap(), "{}");
    }

    #[test]
    fn reports_where_an_unterminated_block_comment_starts() {
        assert_eq!(
            strip_comments("{\n  /* open\n}").unwrap_err(),
            UnterminatedComment { line: 2, column: 3 }
        );
        assert_eq!(
            strip_comments("/*/").unwrap_err(),
            UnterminatedComment { line: 1, column: 1 }
        );
    }
}
