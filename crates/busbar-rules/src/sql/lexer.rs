//! Splits a SQL filter or action expression into tokens, each with its 1-based character position.

use crate::error::SyntaxError;

/// Service Bus caps filter and action expressions at 1024 characters (quota
/// "Maximum length of filter condition string" / "of rule action string").
pub(crate) const MAX_EXPRESSION_CHARS: usize = 1024;

/// Reserved words (matched case-insensitively); a regular identifier may not be one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keyword {
    And,
    Or,
    Not,
    In,
    Like,
    Escape,
    Is,
    Null,
    Exists,
    True,
    False,
}

impl Keyword {
    fn from_word(word: &str) -> Option<Keyword> {
        const WORDS: [(&str, Keyword); 11] = [
            ("AND", Keyword::And),
            ("OR", Keyword::Or),
            ("NOT", Keyword::Not),
            ("IN", Keyword::In),
            ("LIKE", Keyword::Like),
            ("ESCAPE", Keyword::Escape),
            ("IS", Keyword::Is),
            ("NULL", Keyword::Null),
            ("EXISTS", Keyword::Exists),
            ("TRUE", Keyword::True),
            ("FALSE", Keyword::False),
        ];
        WORDS
            .iter()
            .find(|(w, _)| w.eq_ignore_ascii_case(word))
            .map(|(_, k)| *k)
    }
}

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind {
    Keyword(Keyword),
    /// A regular identifier (also `sys`, `user`, `SET`, `REMOVE`, function names).
    Word(String),
    /// A `[delimited]` or `"quoted"` identifier: never a keyword.
    Delimited(String),
    Integer(i64),
    Float(f64),
    Text(String),
    /// `@name`, with its `@`.
    Parameter(String),
    LeftParen,
    RightParen,
    Comma,
    Dot,
    Semicolon,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    End,
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) position: usize,
}

pub(crate) fn syntax_error(position: usize, message: impl Into<String>) -> SyntaxError {
    SyntaxError {
        position,
        message: message.into(),
    }
}

/// Tokenizes the whole expression (it is short: at most [`MAX_EXPRESSION_CHARS`]).
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, SyntaxError> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > MAX_EXPRESSION_CHARS {
        return Err(syntax_error(
            MAX_EXPRESSION_CHARS + 1,
            format!("expression is longer than {MAX_EXPRESSION_CHARS} characters"),
        ));
    }
    let mut lexer = Lexer { chars, index: 0 };
    let mut tokens = Vec::new();
    loop {
        let token = lexer.next_token()?;
        let end = token.kind == TokenKind::End;
        tokens.push(token);
        if end {
            return Ok(tokens);
        }
    }
}

struct Lexer {
    chars: Vec<char>,
    index: usize,
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.index).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.index + ahead).copied()
    }

    fn next_token(&mut self) -> Result<Token, SyntaxError> {
        while self.peek().is_some_and(char::is_whitespace) {
            self.index += 1;
        }
        let position = self.index + 1;
        let token = |kind| Ok(Token { kind, position });
        let Some(c) = self.peek() else {
            return token(TokenKind::End);
        };
        if c.is_alphabetic() {
            let word = self.take_while(|c| c == '_' || c.is_alphanumeric());
            return token(match Keyword::from_word(&word) {
                Some(keyword) => TokenKind::Keyword(keyword),
                None => TokenKind::Word(word),
            });
        }
        if c.is_ascii_digit() {
            return self.number(position).map(|kind| Token { kind, position });
        }
        self.index += 1;
        let kind = match c {
            '\'' => TokenKind::Text(self.quoted('\'', position, "string")?),
            '"' => TokenKind::Delimited(self.quoted('"', position, "quoted identifier")?),
            '[' => TokenKind::Delimited(self.quoted(']', position, "delimited identifier")?),
            '(' => TokenKind::LeftParen,
            ')' => TokenKind::RightParen,
            ',' => TokenKind::Comma,
            '.' => TokenKind::Dot,
            ';' => TokenKind::Semicolon,
            '=' => TokenKind::Equal,
            '+' => TokenKind::Plus,
            '-' => TokenKind::Minus,
            '*' => TokenKind::Star,
            '/' => TokenKind::Slash,
            '%' => TokenKind::Percent,
            '!' if self.eat('=') => TokenKind::NotEqual,
            '<' if self.eat('>') => TokenKind::NotEqual,
            '<' if self.eat('=') => TokenKind::LessEqual,
            '<' => TokenKind::Less,
            '>' if self.eat('=') => TokenKind::GreaterEqual,
            '>' => TokenKind::Greater,
            '@' => {
                let name = self.take_while(|c| c == '_' || c.is_alphanumeric());
                if name.is_empty() {
                    return Err(syntax_error(
                        position,
                        "expected a parameter name after '@'",
                    ));
                }
                TokenKind::Parameter(format!("@{name}"))
            }
            other => {
                return Err(syntax_error(
                    position,
                    format!("unexpected character '{other}'"),
                ));
            }
        };
        token(kind)
    }

    fn eat(&mut self, expected: char) -> bool {
        let found = self.peek() == Some(expected);
        if found {
            self.index += 1;
        }
        found
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let start = self.index;
        while self.peek().is_some_and(&keep) {
            self.index += 1;
        }
        self.chars
            .get(start..self.index)
            .unwrap_or_default()
            .iter()
            .collect()
    }

    /// Reads up to the closing `close`, where a doubled `close` stands for one.
    fn quoted(&mut self, close: char, position: usize, what: &str) -> Result<String, SyntaxError> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(syntax_error(position, format!("unterminated {what}"))),
                Some(c) if c == close => {
                    self.index += 1;
                    if !self.eat(close) {
                        return Ok(text);
                    }
                    text.push(close);
                }
                Some(c) => {
                    self.index += 1;
                    text.push(c);
                }
            }
        }
    }

    /// `digits`, `digits.digits` or either followed by `E[+-]digits`.
    fn number(&mut self, position: usize) -> Result<TokenKind, SyntaxError> {
        let mut literal = self.take_while(|c| c.is_ascii_digit());
        let mut is_float = false;
        if self.peek() == Some('.') {
            is_float = true;
            self.index += 1;
            literal.push('.');
            literal.push_str(&self.take_while(|c| c.is_ascii_digit()));
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let sign = matches!(self.peek_at(1), Some('+' | '-'));
            let digit_at = if sign { 2 } else { 1 };
            if self.peek_at(digit_at).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                literal.push('e');
                self.index += 1;
                if sign {
                    literal.extend(self.peek());
                    self.index += 1;
                }
                literal.push_str(&self.take_while(|c| c.is_ascii_digit()));
            }
        }
        if self.peek().is_some_and(|c| c.is_alphabetic() || c == '_') {
            return Err(syntax_error(
                self.index + 1,
                "a number must not run into a name",
            ));
        }
        if is_float {
            return literal
                .parse::<f64>()
                .map(TokenKind::Float)
                .map_err(|_| syntax_error(position, format!("invalid number '{literal}'")));
        }
        literal.parse::<i64>().map(TokenKind::Integer).map_err(|_| {
            syntax_error(
                position,
                format!("integer '{literal}' is out of range for a long"),
            )
        })
    }
}
