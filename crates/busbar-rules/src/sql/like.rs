//! `LIKE` patterns: `%` (any run of characters), `_` (one character) and an escape character.

use crate::error::EvaluationError;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(char),
    AnyOne,
    AnyRun,
}

/// A compiled `LIKE` pattern. Matching is case-sensitive (ordinal), like string `=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LikePattern {
    pieces: Vec<Piece>,
}

impl LikePattern {
    /// Compiles `pattern`; `escape` makes the character after it literal.
    pub(crate) fn compile(
        pattern: &str,
        escape: Option<char>,
    ) -> Result<LikePattern, EvaluationError> {
        let mut pieces = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            let piece = match c {
                c if Some(c) == escape => match chars.next() {
                    Some(escaped) => Piece::Literal(escaped),
                    None => {
                        return Err(EvaluationError::InvalidOperand(format!(
                            "the LIKE pattern '{pattern}' ends with its escape character"
                        )));
                    }
                },
                '%' if pieces.last() == Some(&Piece::AnyRun) => continue,
                '%' => Piece::AnyRun,
                '_' => Piece::AnyOne,
                c => Piece::Literal(c),
            };
            pieces.push(piece);
        }
        Ok(LikePattern { pieces })
    }

    /// Whether `text` matches the whole pattern. Backtracks only to the last `%`, so the cost
    /// is at most pattern length × text length.
    pub(crate) fn matches(&self, text: &str) -> bool {
        let mut piece = 0;
        let mut at = 0;
        // After a `%`: the piece following it and the text offset it is being tried from.
        let mut retry: Option<(usize, usize)> = None;
        loop {
            let rest = text.get(at..).unwrap_or_default();
            let advanced = match self.pieces.get(piece) {
                Some(Piece::AnyRun) => {
                    retry = Some((piece + 1, at));
                    piece += 1;
                    continue;
                }
                Some(Piece::AnyOne) => rest.chars().next(),
                Some(Piece::Literal(expected)) => rest.chars().next().filter(|c| c == expected),
                None if rest.is_empty() => return true,
                None => None,
            };
            if let Some(c) = advanced {
                at += c.len_utf8();
                piece += 1;
                continue;
            }
            // Mismatch: let the last `%` swallow one more character, or fail.
            let Some((after_run, from)) = retry else {
                return false;
            };
            let Some(c) = text.get(from..).and_then(|rest| rest.chars().next()) else {
                return false;
            };
            retry = Some((after_run, from + c.len_utf8()));
            piece = after_run;
            at = from + c.len_utf8();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LikePattern;

    fn like(pattern: &str, escape: Option<char>, text: &str) -> bool {
        LikePattern::compile(pattern, escape).unwrap().matches(text)
    }

    #[test]
    fn wildcards_match_runs_and_single_characters() {
        assert!(like("%bus%", None, "service bus topic"));
        assert!(like("a_c", None, "abc"));
        assert!(!like("a_c", None, "abbc"));
        assert!(like("%", None, ""));
        assert!(!like("_", None, ""));
        assert!(like("%a%b%c", None, "xxaxxbxxc"));
        assert!(!like("%a%b%c", None, "xxaxxbxxcx"));
        assert!(like("é_ü", None, "éxü"));
        assert!(!like("ABC", None, "abc"));
    }

    #[test]
    fn escape_makes_wildcards_literal() {
        assert!(like(r"ABC\%", Some('\\'), "ABC%"));
        assert!(!like(r"ABC\%", Some('\\'), "ABCD"));
        assert!(like("a!_b", Some('!'), "a_b"));
        assert!(!like("a!_b", Some('!'), "axb"));
        assert!(LikePattern::compile("abc!", Some('!')).is_err());
    }

    #[test]
    fn pathological_patterns_stay_polynomial() {
        let text = "a".repeat(2000);
        assert!(!like("%a%a%a%a%a%a%a%a%b", None, &text));
    }
}
