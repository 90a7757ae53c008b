//! Data-driven table for the SQL filter language: parsing, evaluation, NULL semantics and type
//! coercion, each row an expression and what it must give against one fixed message.

use busbar_rules::{Guid, Message, SqlFilter, TimeSpan, Timestamp, Truth, Value};

#[derive(Debug)]
enum Expect {
    /// Evaluates to true (the filter matches).
    T,
    /// Evaluates to false.
    F,
    /// Evaluates to unknown (the filter does not match).
    U,
    /// Evaluation fails with an error whose message contains this text.
    Fails(&'static str),
    /// Parsing fails at this 1-based character position.
    Syntax(usize),
}

use Expect::{F, Fails, Syntax, T, U};

const TABLE: &[(&str, Expect)] = &[
    // Literals, comparison operators, numeric promotion.
    ("1=1", T),
    ("1=0", F),
    ("1 = 1.0", T),
    ("1 < 1.5", T),
    ("2.5 >= 2", T),
    ("2 <= 2", T),
    ("3 > 2", T),
    ("1 <> 2", T),
    ("1 != 1", F),
    ("'a' = 'a'", T),
    ("'a' = 'A'", F),
    ("'a' < 'b'", T),
    ("'it''s' = 'it' + '''s'", T),
    ("TRUE = TRUE", T),
    ("true <> false", T),
    ("1.5E1 = 15", T),
    ("101.5E5 = 10150000", T),
    ("0.5E-2 = 0.005", T),
    ("9223372036854775807 + 1 < 0", T),
    // Arithmetic and precedence.
    ("1 + 2 * 3 = 7", T),
    ("(1 + 2) * 3 = 9", T),
    ("10 - 2 - 3 = 5", T),
    ("8 / 2 / 2 = 2", T),
    ("7 / 2 = 3", T),
    ("7 / 2.0 = 3.5", T),
    ("-7 % 3 = -1", T),
    ("- -1 = +1", T),
    ("1 = 1 OR 1 = 0 AND 1 = 0", T),
    ("(1 = 1 OR 1 = 0) AND 1 = 0", F),
    ("NOT 1 = 0 AND 1 = 1", T),
    ("not not 1 = 1", T),
    // User properties: names case-insensitive, values case-sensitive; scopes and quoting.
    ("color = 'red'", T),
    ("COLOR = 'red'", T),
    ("user.color = 'red'", T),
    ("USER.Color = 'red'", T),
    ("[color] = 'red'", T),
    ("\"color\" = 'red'", T),
    ("color = 'RED'", F),
    ("[Property With Space] = 'x'", T),
    ("[HR-EmployeeID] = 7", T),
    ("\"Contoso & Northwind\" = 'yes'", T),
    ("[odd]]name] = 1", T),
    ("[and] = 1", U),
    ("é = 1", U),
    ("quantity = 10", T),
    ("quantity > 9.5", T),
    ("price = 2.5", T),
    ("price * 4 = 10", T),
    ("quantity / 4 = 2", T),
    ("quantity / 4.0 = 2.5", T),
    ("quantity % 3 = 1", T),
    ("-quantity = -10", T),
    ("quantity + price = 12.5", T),
    ("neg * -1 = 3", T),
    ("big + 1 = -9223372036854775807 - 1", T),
    ("color + 'dish' = 'reddish'", T),
    ("flag", T),
    ("flag = TRUE", T),
    ("NOT flag", F),
    ("flag AND quantity = 10", T),
    // System properties.
    ("sys.MessageId = 'id-1'", T),
    ("sys.messageid = 'id-1'", T),
    ("SYS.Label LIKE '%bus%'", T),
    ("sys.Subject = 'service bus'", T),
    ("sys.CorrelationId = 'corr'", T),
    ("sys.SessionId = 's1'", T),
    ("sys.ContentType = 'application/json'", T),
    ("sys.SequenceNumber = 42", T),
    ("sys.SequenceNumber > 41.5", T),
    ("sys.DeliveryCount = 0", T),
    ("sys.To IN ('a', 'dest')", T),
    ("sys.ReplyTo IS NULL", T),
    ("sys.ReplyTo = 'x'", U),
    ("sys.EnqueuedTimeUtc = sys.EnqueuedTimeUtc", T),
    (
        "sys.EnqueuedTimeUtc + sys.TimeToLive > sys.EnqueuedTimeUtc",
        T,
    ),
    (
        "sys.EnqueuedTimeUtc - sys.EnqueuedTimeUtc = sys.TimeToLive - sys.TimeToLive",
        T,
    ),
    ("sys.TimeToLive > -sys.TimeToLive", T),
    (
        "sys.Label LIKE '%bus%' OR user.tag IN ('queue', 'topic', 'subscription')",
        T,
    ),
    // NULL and three-valued logic.
    ("missing = 1", U),
    ("missing <> 1", U),
    ("NOT missing = 1", U),
    ("missing IS NULL", T),
    ("missing IS NOT NULL", F),
    ("nothing IS NULL", T),
    ("nothing = 1", U),
    ("EXISTS(nothing)", T),
    ("EXISTS(missing)", F),
    ("NOT EXISTS(missing)", T),
    ("exists ( [color] )", T),
    ("EXISTS(sys.ReplyTo)", F),
    ("EXISTS(sys.MessageId)", T),
    ("missing = 1 AND 1 = 1", U),
    ("missing = 1 AND 1 = 0", F),
    ("1 = 0 AND missing = 1", F),
    ("missing = 1 OR 1 = 1", T),
    ("missing = 1 OR 1 = 0", U),
    ("missing = 1 OR missing = 2", U),
    ("NULL = NULL", U),
    ("1 = NULL", U),
    ("NULL", U),
    ("missing", U),
    ("missing + 1 = 1", U),
    ("-missing = 1", U),
    ("missing * 'a' = 1", U),
    ("missing IN (1, 2)", U),
    ("missing NOT IN (1, 2)", U),
    ("1 IN (2, NULL)", U),
    ("1 IN (1, NULL)", T),
    ("1 NOT IN (2, NULL)", U),
    ("missing LIKE 'a%'", U),
    ("missing NOT LIKE 'a%'", U),
    ("color LIKE NULL", U),
    ("color LIKE 'r%' ESCAPE NULL", U),
    // IN.
    ("color IN ('red', 'blue')", T),
    ("color NOT IN ('red', 'blue')", F),
    ("color in ('x')", F),
    ("quantity IN (1, 10.0)", T),
    ("quantity IN (1, 2 * 5)", T),
    // LIKE.
    ("color LIKE 'r%'", T),
    ("color LIKE 'r_d'", T),
    ("color LIKE '_'", F),
    ("color LIKE 'R%'", F),
    ("color NOT LIKE 'b%'", T),
    ("pct LIKE '50!%' ESCAPE '!'", T),
    ("'ABC%' LIKE 'ABC\\%' ESCAPE '\\'", T),
    ("'ABCD' LIKE 'ABC\\%' ESCAPE '\\'", F),
    ("color LIKE 'r' + '%'", T),
    ("pct LIKE '50' + '!%' ESCAPE '!'", T),
    // Functions.
    ("property('color') = 'red'", T),
    ("p('sys.MessageId') = 'id-1'", T),
    ("p('user.color') = 'red'", T),
    ("P('COLOR') = 'red'", T),
    ("property('missing') IS NULL", T),
    ("property(NULL) IS NULL", T),
    ("newid() = newid()", F),
    ("newid() <> newid()", T),
    // Evaluation errors: distinct from "no match".
    (
        "color > 5",
        Fails("operator '>' cannot be applied to operands of type 'string' and 'long'"),
    ),
    ("color = 5", Fails("operator '='")),
    ("5 IN ('a')", Fails("operator 'IN'")),
    ("flag < TRUE", Fails("operator '<'")),
    ("sys.EnqueuedTimeUtc > 5", Fails("'datetime' and 'long'")),
    ("'a' + 1 = 'a1'", Fails("operator '+'")),
    ("-color = 1", Fails("unary -")),
    ("quantity / 0 = 1", Fails("divide by zero")),
    ("quantity % 0 = 1", Fails("divide by zero")),
    (
        "-9223372036854775807 - 1 < (-9223372036854775807 - 1) / -1",
        Fails("overflow"),
    ),
    ("quantity LIKE '1%'", Fails("LIKE operand must be a string")),
    ("color LIKE 5 + 1", Fails("LIKE pattern must be a string")),
    ("color LIKE 'a' + '%' ESCAPE 'ab'", Fails("length 1")),
    (
        "color LIKE 'a' + '%!' ESCAPE '!'",
        Fails("ends with its escape"),
    ),
    (
        "property('sys.Bogus') = 1",
        Fails("system property 'Bogus' does not exist"),
    ),
    ("property(5) = 1", Fails("property() expects a string")),
    ("color AND 1 = 1", Fails("expected a boolean")),
    ("quantity", Fails("expected a boolean")),
    // Not errors thanks to promotion or short-circuit.
    ("quantity / 0.0 > 1", T),
    ("1 = 0 AND color > 5", F),
    ("1 = 1 OR color > 5", T),
    // Syntax errors, with the position of the fault (in characters, 1-based).
    ("", Syntax(1)),
    ("color =", Syntax(8)),
    ("color = 'red", Syntax(9)),
    ("(1 = 1", Syntax(7)),
    ("1 = 1)", Syntax(6)),
    ("color LIKE", Syntax(11)),
    ("sys.Bogus = 1", Syntax(5)),
    ("foo.bar = 1", Syntax(1)),
    ("1 = 1 AND", Syntax(10)),
    ("color IS 1", Syntax(10)),
    ("1 + 1 IS NULL", Syntax(1)),
    ("1 + 1", Syntax(1)),
    ("'red'", Syntax(1)),
    ("NOT 5", Syntax(5)),
    ("1 = 1 AND 5", Syntax(11)),
    ("color @ 1", Syntax(7)),
    ("color = 99999999999999999999", Syntax(9)),
    ("color = 12abc", Syntax(11)),
    ("color IN ()", Syntax(11)),
    ("color IN (1", Syntax(12)),
    ("and = 1", Syntax(1)),
    ("x = 1 x", Syntax(7)),
    ("unknownfn(1) = 1", Syntax(1)),
    ("newid(1) = 1", Syntax(7)),
    ("color NOT = 'a'", Syntax(11)),
    ("1 = 1;", Syntax(6)),
    ("EXISTS color", Syntax(8)),
    ("EXISTS(1)", Syntax(8)),
    ("[unterminated = 1", Syntax(1)),
    ("color LIKE 'a%' ESCAPE 'ab'", Syntax(24)),
    ("color LIKE 'a!' ESCAPE '!'", Syntax(12)),
    ("'é' = 'é' AND", Syntax(14)),
    ("sys. = 1", Syntax(6)),
];

fn fixture() -> Message {
    Message {
        message_id: Some("id-1".into()),
        correlation_id: Some("corr".into()),
        to: Some("dest".into()),
        label: Some("service bus".into()),
        session_id: Some("s1".into()),
        content_type: Some("application/json".into()),
        sequence_number: Some(42),
        delivery_count: Some(0),
        enqueued_time: Some(Timestamp(1_700_000_000_000)),
        time_to_live: Some(TimeSpan(60_000)),
        ..Message::default()
    }
    .with_user("color", Value::Str("red".into()))
    .with_user("quantity", Value::Int(10))
    .with_user("price", Value::Float(2.5))
    .with_user("flag", Value::Bool(true))
    .with_user("nothing", Value::Null)
    .with_user("pct", Value::Str("50%".into()))
    .with_user("neg", Value::Int(-3))
    .with_user("big", Value::Int(i64::MAX))
    .with_user("Property With Space", Value::Str("x".into()))
    .with_user("HR-EmployeeID", Value::Int(7))
    .with_user("Contoso & Northwind", Value::Str("yes".into()))
    .with_user("odd]name", Value::Int(1))
}

#[test]
fn sql_language_table() {
    let message = fixture();
    let mut next = 0u8;
    let mut new_guid = || {
        next = next.wrapping_add(1);
        Guid([next; 16])
    };
    let mut failures = Vec::new();
    for (expression, expect) in TABLE {
        let outcome = SqlFilter::parse(expression).map(|f| f.evaluate(&message, &mut new_guid));
        let ok = match (expect, &outcome) {
            (T, Ok(Ok(Truth::True))) | (F, Ok(Ok(Truth::False))) | (U, Ok(Ok(Truth::Unknown))) => {
                true
            }
            (Fails(text), Ok(Err(error))) => error.to_string().contains(text),
            (Syntax(position), Err(error)) => error.position == *position,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{expression:?}: expected {expect:?}, got {outcome:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn syntax_errors_read_well() {
    let error = SqlFilter::parse("color = 'red' AND").unwrap_err();
    assert_eq!(
        error.to_string(),
        "syntax error at position 18: expected a property name or a value, found the end of the expression"
    );
    let error = SqlFilter::parse("sys.Colour = 1").unwrap_err();
    assert_eq!(
        error.to_string(),
        "syntax error at position 5: 'Colour' is not a system property"
    );
}

#[test]
fn hostile_nesting_and_length_are_refused_not_overflowed() {
    let deep_parens = format!("{}1=1{}", "(".repeat(200), ")".repeat(200));
    assert!(
        SqlFilter::parse(&deep_parens)
            .unwrap_err()
            .message
            .contains("deeper")
    );
    let deep_not = format!("{}1=1", "NOT ".repeat(200));
    assert!(
        SqlFilter::parse(&deep_not)
            .unwrap_err()
            .message
            .contains("deeper")
    );
    let deep_minus = format!("{}1 = 1", "-".repeat(300));
    assert!(
        SqlFilter::parse(&deep_minus)
            .unwrap_err()
            .message
            .contains("deeper")
    );
    let long_chain = vec!["a=1"; 140].join(" OR ");
    assert!(
        SqlFilter::parse(&long_chain)
            .unwrap_err()
            .message
            .contains("deeper")
    );
    let fine_chain = vec!["a=1"; 100].join(" OR ");
    assert!(SqlFilter::parse(&fine_chain).is_ok());
    let too_long = format!("color = '{}'", "x".repeat(1020));
    assert_eq!(SqlFilter::parse(&too_long).unwrap_err().position, 1025);
    let sixty_four_deep = format!("{}1=1{}", "(".repeat(64), ")".repeat(64));
    assert!(SqlFilter::parse(&sixty_four_deep).is_ok());
}

#[test]
fn the_expression_is_kept_as_written() {
    let text = "Color = 'red'  AND sys.Label LIKE 'a%'";
    assert_eq!(SqlFilter::parse(text).unwrap().expression(), text);
}
