//! Recursive-descent parser for the Service Bus SQL filter and rule action grammars.
//!
//! Precedence, loosest first: `OR`, `AND`, `NOT`, the predicates (`= <> != < <= > >=`,
//! `IS [NOT] NULL`, `[NOT] IN`, `[NOT] LIKE … [ESCAPE …]`, `EXISTS`), `+ -`, `* / %`,
//! unary `+ -`. Keywords are case-insensitive. Both the parser's recursion and the depth of the
//! tree it builds are capped at [`MAX_DEPTH`], so hostile input cannot exhaust the stack here
//! or later when the tree is evaluated or dropped.

use crate::error::SyntaxError;
use crate::message::{PropertyRef, SystemProperty};
use crate::parameter::{self, Parameter};
use crate::sql::ast::{CompareOp, Expr, LikeRhs, Statement};
use crate::sql::lexer::{Keyword, Token, TokenKind, syntax_error, tokenize};
use crate::sql::like::LikePattern;
use crate::value::{ArithmeticOp, Value};

/// How deeply expressions may nest (parentheses, `NOT`, unary minus) and how deep the
/// resulting tree may be (chains such as `a=1 OR a=2 OR …` deepen it too).
pub(crate) const MAX_DEPTH: usize = 128;

/// Service Bus quota: "Maximum number of expressions per rule action".
pub(crate) const MAX_ACTION_STATEMENTS: usize = 32;

/// Parses a filter: a single predicate; each `@name` is replaced by its value in `parameters`.
pub(crate) fn parse_filter(text: &str, parameters: &[Parameter]) -> Result<Expr, SyntaxError> {
    let mut parser = Parser::new(text, parameters)?;
    let position = parser.position();
    let (expr, _) = parser.or()?;
    parser.expect_boolean(&expr, position)?;
    parser.expect_end()?;
    Ok(expr)
}

/// Parses an action: `SET property = expression` / `REMOVE property` statements, each
/// optionally followed by `;`; each `@name` is replaced by its value in `parameters`.
pub(crate) fn parse_action(
    text: &str,
    parameters: &[Parameter],
) -> Result<Vec<Statement>, SyntaxError> {
    let mut parser = Parser::new(text, parameters)?;
    let mut statements = Vec::new();
    loop {
        while parser.eat(&TokenKind::Semicolon) {}
        if parser.peek() == &TokenKind::End {
            break;
        }
        let position = parser.position();
        if statements.len() == MAX_ACTION_STATEMENTS {
            return Err(syntax_error(
                position,
                format!("an action may hold at most {MAX_ACTION_STATEMENTS} statements"),
            ));
        }
        let verb = match parser.peek() {
            TokenKind::Word(word) => word.to_ascii_uppercase(),
            _ => String::new(),
        };
        parser.advance();
        let statement = match verb.as_str() {
            "SET" => {
                let property = parser.assignable_property()?;
                parser.expect(&TokenKind::Equal, "'='")?;
                Statement::Set(property, parser.additive()?.0)
            }
            "REMOVE" => Statement::Remove(parser.assignable_property()?),
            _ => return Err(syntax_error(position, "expected SET or REMOVE")),
        };
        statements.push(statement);
    }
    if statements.is_empty() {
        return Err(syntax_error(
            1,
            "an action needs at least one SET or REMOVE statement",
        ));
    }
    Ok(statements)
}

/// Why an expression's `@name` is refused: the rule binds no value to it.
fn unbound_parameter(name: &str) -> String {
    format!("the parameter '{name}' is not defined in the expression's parameters")
}

type Parsed = (Expr, usize);

struct Parser<'p> {
    parameters: &'p [Parameter],
    tokens: Vec<Token>,
    next: usize,
    nesting: usize,
    end: Token,
}

impl<'p> Parser<'p> {
    fn new(text: &str, parameters: &'p [Parameter]) -> Result<Parser<'p>, SyntaxError> {
        let tokens = tokenize(text)?;
        let end_position = tokens.last().map_or(1, |t| t.position);
        Ok(Parser {
            parameters,
            tokens,
            next: 0,
            nesting: 0,
            end: Token {
                kind: TokenKind::End,
                position: end_position,
            },
        })
    }

    fn token(&self) -> &Token {
        self.tokens.get(self.next).unwrap_or(&self.end)
    }

    fn peek(&self) -> &TokenKind {
        &self.token().kind
    }

    fn peek_second(&self) -> &TokenKind {
        self.tokens
            .get(self.next + 1)
            .map_or(&TokenKind::End, |t| &t.kind)
    }

    fn position(&self) -> usize {
        self.token().position
    }

    fn advance(&mut self) {
        self.next = (self.next + 1).min(self.tokens.len());
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.peek() == kind;
        if found {
            self.advance();
        }
        found
    }

    fn eat_keyword(&mut self, keyword: Keyword) -> bool {
        self.eat(&TokenKind::Keyword(keyword))
    }

    fn unexpected(&self, expected: &str) -> SyntaxError {
        syntax_error(
            self.position(),
            format!("expected {expected}, found {}", describe(self.peek())),
        )
    }

    fn expect(&mut self, kind: &TokenKind, expected: &str) -> Result<(), SyntaxError> {
        if self.eat(kind) {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_end(&self) -> Result<(), SyntaxError> {
        match self.peek() {
            TokenKind::End => Ok(()),
            _ => Err(self.unexpected("the end of the expression")),
        }
    }

    fn expect_boolean(&self, expr: &Expr, position: usize) -> Result<(), SyntaxError> {
        if expr.can_be_boolean() {
            Ok(())
        } else {
            Err(syntax_error(
                position,
                "expected a condition, found a value expression",
            ))
        }
    }

    /// Builds a node over children of the given depths, refusing trees deeper than allowed.
    fn node(&self, expr: Expr, position: usize, children: &[usize]) -> Result<Parsed, SyntaxError> {
        let depth = 1 + children.iter().copied().max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return Err(syntax_error(
                position,
                format!("expression nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok((expr, depth))
    }

    /// Runs `inner` one nesting level deeper (parentheses, `NOT`, unary signs, call arguments).
    fn nested<T>(
        &mut self,
        inner: impl FnOnce(&mut Self) -> Result<T, SyntaxError>,
    ) -> Result<T, SyntaxError> {
        if self.nesting >= MAX_DEPTH {
            return Err(syntax_error(
                self.position(),
                format!("expression nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.nesting += 1;
        let result = inner(self);
        self.nesting -= 1;
        result
    }

    fn or(&mut self) -> Result<Parsed, SyntaxError> {
        let position = self.position();
        let mut left = self.and()?;
        while self.peek() == &TokenKind::Keyword(Keyword::Or) {
            self.advance();
            let right_at = self.position();
            let right = self.and()?;
            self.expect_boolean(&left.0, position)?;
            self.expect_boolean(&right.0, right_at)?;
            left = self.node(
                Expr::Or(Box::new(left.0), Box::new(right.0)),
                position,
                &[left.1, right.1],
            )?;
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Parsed, SyntaxError> {
        let position = self.position();
        let mut left = self.not()?;
        while self.peek() == &TokenKind::Keyword(Keyword::And) {
            self.advance();
            let right_at = self.position();
            let right = self.not()?;
            self.expect_boolean(&left.0, position)?;
            self.expect_boolean(&right.0, right_at)?;
            left = self.node(
                Expr::And(Box::new(left.0), Box::new(right.0)),
                position,
                &[left.1, right.1],
            )?;
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Parsed, SyntaxError> {
        let position = self.position();
        if self.eat_keyword(Keyword::Not) {
            let operand_at = self.position();
            let operand = self.nested(Parser::not)?;
            self.expect_boolean(&operand.0, operand_at)?;
            return self.node(Expr::Not(Box::new(operand.0)), position, &[operand.1]);
        }
        if self.eat_keyword(Keyword::Exists) {
            self.expect(&TokenKind::LeftParen, "'(' after EXISTS")?;
            let property = self.property()?;
            self.expect(&TokenKind::RightParen, "')'")?;
            return self.node(Expr::Exists(property), position, &[]);
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Parsed, SyntaxError> {
        let position = self.position();
        let left = self.additive()?;
        let compare = match self.peek() {
            TokenKind::Equal => Some(CompareOp::Equal),
            TokenKind::NotEqual => Some(CompareOp::NotEqual),
            TokenKind::Less => Some(CompareOp::Less),
            TokenKind::LessEqual => Some(CompareOp::LessEqual),
            TokenKind::Greater => Some(CompareOp::Greater),
            TokenKind::GreaterEqual => Some(CompareOp::GreaterEqual),
            _ => None,
        };
        if let Some(op) = compare {
            self.advance();
            let right = self.additive()?;
            let expr = Expr::Compare(op, Box::new(left.0), Box::new(right.0));
            return self.node(expr, position, &[left.1, right.1]);
        }
        if self.eat_keyword(Keyword::Is) {
            let negated = self.eat_keyword(Keyword::Not);
            if !self.eat_keyword(Keyword::Null) {
                return Err(self.unexpected("NULL after IS"));
            }
            if !matches!(left.0, Expr::Property(_) | Expr::DynamicProperty(_)) {
                return Err(syntax_error(
                    position,
                    "IS [NOT] NULL applies to a property",
                ));
            }
            return self.node(
                Expr::IsNull {
                    operand: Box::new(left.0),
                    negated,
                },
                position,
                &[left.1],
            );
        }
        let negated = self.eat_keyword(Keyword::Not);
        if self.eat_keyword(Keyword::In) {
            return self.in_list(left, negated, position);
        }
        if self.eat_keyword(Keyword::Like) {
            return self.like(left, negated, position);
        }
        if negated {
            return Err(self.unexpected("IN or LIKE after NOT"));
        }
        Ok(left)
    }

    fn in_list(
        &mut self,
        operand: Parsed,
        negated: bool,
        position: usize,
    ) -> Result<Parsed, SyntaxError> {
        self.expect(&TokenKind::LeftParen, "'(' after IN")?;
        let mut list = Vec::new();
        let mut depths = vec![operand.1];
        loop {
            let (item, depth) = self.nested(Parser::additive)?;
            list.push(item);
            depths.push(depth);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RightParen, "',' or ')' in the IN list")?;
        self.node(
            Expr::In {
                operand: Box::new(operand.0),
                list,
                negated,
            },
            position,
            &depths,
        )
    }

    fn like(
        &mut self,
        operand: Parsed,
        negated: bool,
        position: usize,
    ) -> Result<Parsed, SyntaxError> {
        let pattern_at = self.position();
        let pattern = self.additive()?;
        let escape = if self.eat_keyword(Keyword::Escape) {
            Some((self.position(), self.additive()?))
        } else {
            None
        };
        let mut depths = vec![operand.1, pattern.1];
        depths.extend(escape.as_ref().map(|(_, (_, depth))| *depth));
        let rhs = match (&pattern.0, &escape) {
            (Expr::Literal(Value::Str(text)), None) => LikeRhs::Compiled(
                LikePattern::compile(text, None)
                    .map_err(|e| syntax_error(pattern_at, e.to_string()))?,
            ),
            (
                Expr::Literal(Value::Str(text)),
                Some((escape_at, (Expr::Literal(Value::Str(escape)), _))),
            ) => {
                let mut chars = escape.chars();
                let (Some(escape), None) = (chars.next(), chars.next()) else {
                    return Err(syntax_error(
                        *escape_at,
                        "the ESCAPE character must be a string of length 1",
                    ));
                };
                LikeRhs::Compiled(
                    LikePattern::compile(text, Some(escape))
                        .map_err(|e| syntax_error(pattern_at, e.to_string()))?,
                )
            }
            _ => LikeRhs::Dynamic {
                pattern: Box::new(pattern.0),
                escape: escape.map(|(_, (expr, _))| Box::new(expr)),
            },
        };
        self.node(
            Expr::Like {
                operand: Box::new(operand.0),
                pattern: rhs,
                negated,
            },
            position,
            &depths,
        )
    }

    fn additive(&mut self) -> Result<Parsed, SyntaxError> {
        let position = self.position();
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                TokenKind::Plus => ArithmeticOp::Add,
                TokenKind::Minus => ArithmeticOp::Subtract,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.multiplicative()?;
            let expr = Expr::Arithmetic(op, Box::new(left.0), Box::new(right.0));
            left = self.node(expr, position, &[left.1, right.1])?;
        }
    }

    fn multiplicative(&mut self) -> Result<Parsed, SyntaxError> {
        let position = self.position();
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                TokenKind::Star => ArithmeticOp::Multiply,
                TokenKind::Slash => ArithmeticOp::Divide,
                TokenKind::Percent => ArithmeticOp::Remainder,
                _ => return Ok(left),
            };
            self.advance();
            let right = self.unary()?;
            let expr = Expr::Arithmetic(op, Box::new(left.0), Box::new(right.0));
            left = self.node(expr, position, &[left.1, right.1])?;
        }
    }

    fn unary(&mut self) -> Result<Parsed, SyntaxError> {
        let position = self.position();
        if self.eat(&TokenKind::Plus) {
            return self.nested(Parser::unary);
        }
        if !self.eat(&TokenKind::Minus) {
            return self.primary();
        }
        let (operand, depth) = self.nested(Parser::unary)?;
        match operand {
            Expr::Literal(Value::Int(i)) => {
                Ok((Expr::Literal(Value::Int(i.wrapping_neg())), depth))
            }
            Expr::Literal(Value::Float(f)) => Ok((Expr::Literal(Value::Float(-f)), depth)),
            operand => self.node(Expr::Negate(Box::new(operand)), position, &[depth]),
        }
    }

    fn primary(&mut self) -> Result<Parsed, SyntaxError> {
        let position = self.position();
        let literal = match self.peek() {
            TokenKind::Integer(i) => Some(Value::Int(*i)),
            TokenKind::Float(f) => Some(Value::Float(*f)),
            TokenKind::Text(text) => Some(Value::Str(text.clone().into())),
            TokenKind::Keyword(Keyword::True) => Some(Value::Bool(true)),
            TokenKind::Keyword(Keyword::False) => Some(Value::Bool(false)),
            TokenKind::Keyword(Keyword::Null) => Some(Value::Null),
            TokenKind::Parameter(name) => Some(
                parameter::bound(self.parameters, name)
                    .ok_or_else(|| syntax_error(position, unbound_parameter(name)))?,
            ),
            _ => None,
        };
        if let Some(value) = literal {
            self.advance();
            return self.node(Expr::Literal(value), position, &[]);
        }
        if self.eat(&TokenKind::LeftParen) {
            let inner = self.nested(Parser::or)?;
            self.expect(&TokenKind::RightParen, "')'")?;
            return Ok(inner);
        }
        if let (TokenKind::Word(name), TokenKind::LeftParen) = (self.peek(), self.peek_second()) {
            let name = name.to_ascii_lowercase();
            self.advance();
            self.advance();
            return self.function(&name, position);
        }
        let property = self.property()?;
        self.node(Expr::Property(property), position, &[])
    }

    fn function(&mut self, name: &str, position: usize) -> Result<Parsed, SyntaxError> {
        match name {
            "newid" => {
                self.expect(&TokenKind::RightParen, "')': newid() takes no argument")?;
                self.node(Expr::NewId, position, &[])
            }
            "property" | "p" => {
                let (argument, depth) = self.nested(Parser::additive)?;
                self.expect(&TokenKind::RightParen, "')'")?;
                self.node(
                    Expr::DynamicProperty(Box::new(argument)),
                    position,
                    &[depth],
                )
            }
            _ => Err(syntax_error(position, format!("unknown function '{name}'"))),
        }
    }

    /// `[sys. | user.] name`, where each part is a regular, `[delimited]` or `"quoted"` name.
    fn property(&mut self) -> Result<PropertyRef, SyntaxError> {
        let position = self.position();
        let first = self
            .name()
            .ok_or_else(|| self.unexpected("a property name or a value"))?;
        if !self.eat(&TokenKind::Dot) {
            return Ok(PropertyRef::User(first));
        }
        let name_at = self.position();
        let name = self
            .name()
            .ok_or_else(|| self.unexpected("a property name after '.'"))?;
        if first.eq_ignore_ascii_case("sys") {
            return SystemProperty::from_name(&name)
                .map(PropertyRef::System)
                .ok_or_else(|| {
                    syntax_error(name_at, format!("'{name}' is not a system property"))
                });
        }
        if first.eq_ignore_ascii_case("user") {
            return Ok(PropertyRef::User(name));
        }
        Err(syntax_error(
            position,
            format!("unknown scope '{first}': expected 'sys' or 'user'"),
        ))
    }

    fn assignable_property(&mut self) -> Result<PropertyRef, SyntaxError> {
        let position = self.position();
        let property = self.property()?;
        if let PropertyRef::System(system) = property
            && !system.is_writable()
        {
            return Err(syntax_error(
                position,
                format!("system property '{}' is read-only", system.name()),
            ));
        }
        Ok(property)
    }

    fn name(&mut self) -> Option<String> {
        let name = match self.peek() {
            TokenKind::Word(name) | TokenKind::Delimited(name) => name.clone(),
            _ => return None,
        };
        self.advance();
        Some(name)
    }
}

fn describe(kind: &TokenKind) -> String {
    let symbol = match kind {
        TokenKind::Keyword(keyword) => {
            return format!("keyword {}", format!("{keyword:?}").to_uppercase());
        }
        TokenKind::Word(word) => return format!("'{word}'"),
        TokenKind::Delimited(name) => return format!("identifier [{name}]"),
        TokenKind::Integer(i) => return format!("number {i}"),
        TokenKind::Float(f) => return format!("number {f}"),
        TokenKind::Text(text) => return format!("string '{text}'"),
        TokenKind::Parameter(name) => return format!("parameter {name}"),
        TokenKind::End => return "the end of the expression".to_owned(),
        TokenKind::LeftParen => "(",
        TokenKind::RightParen => ")",
        TokenKind::Comma => ",",
        TokenKind::Dot => ".",
        TokenKind::Semicolon => ";",
        TokenKind::Equal => "=",
        TokenKind::NotEqual => "<>",
        TokenKind::Less => "<",
        TokenKind::LessEqual => "<=",
        TokenKind::Greater => ">",
        TokenKind::GreaterEqual => ">=",
        TokenKind::Plus => "+",
        TokenKind::Minus => "-",
        TokenKind::Star => "*",
        TokenKind::Slash => "/",
        TokenKind::Percent => "%",
    };
    format!("'{symbol}'")
}
