//! The `parameters` of a SQL filter or action in a rule-description map (the persisted form of
//! changed rules, which an add-rule request may carry too): `{name: [type, value]}`, the type a
//! symbol naming the administration API's `xs:` type so an `int` reads back as an `int`, a
//! `dateTime` as an AMQP timestamp and a `duration` as its milliseconds.

use busbar_amqp::types::{Symbol, Timestamp as AmqpTimestamp, Value};
use busbar_rules::{Parameter, ParameterValue, TimeSpan, Timestamp};

use crate::errors::BrokerError;

/// The map of `parameters`, or `None` when there are none (the key is then left out).
pub(crate) fn encode(parameters: &[Parameter]) -> Option<Value> {
    if parameters.is_empty() {
        return None;
    }
    let entries = parameters
        .iter()
        .map(|parameter| {
            let (kind, value) = match &parameter.value {
                ParameterValue::String(text) => ("string", Value::String(text.clone())),
                ParameterValue::Int(number) => ("int", Value::Int(*number)),
                ParameterValue::Long(number) => ("long", Value::Long(*number)),
                ParameterValue::Double(number) => ("double", Value::Double(*number)),
                ParameterValue::Boolean(flag) => ("boolean", Value::Bool(*flag)),
                ParameterValue::DateTime(at) => ("dateTime", Value::Timestamp(AmqpTimestamp(at.0))),
                ParameterValue::Duration(span) => ("duration", Value::Long(span.0)),
            };
            let typed = Value::List(vec![Value::Symbol(Symbol::from(kind)), value]);
            (Value::from(parameter.name.as_str()), typed)
        })
        .collect();
    Some(Value::Map(entries))
}

/// The parameters of a `parameters` map (absent or null: none).
pub(crate) fn decode(parameters: Option<&Value>) -> Result<Vec<Parameter>, BrokerError> {
    let entries = match parameters {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Map(entries)) => entries,
        Some(_) => return Err(malformed()),
    };
    entries
        .iter()
        .map(|(name, typed)| {
            let name = name.as_str().ok_or_else(malformed)?;
            let Value::List(typed) = typed else {
                return Err(malformed());
            };
            let kind = typed.first().and_then(Value::as_symbol).map(Symbol::as_str);
            let value = match (kind, typed.get(1)) {
                (Some("string"), Some(Value::String(text))) => ParameterValue::String(text.clone()),
                (Some("int"), Some(Value::Int(number))) => ParameterValue::Int(*number),
                (Some("long"), Some(Value::Long(number))) => ParameterValue::Long(*number),
                (Some("double"), Some(Value::Double(number))) => ParameterValue::Double(*number),
                (Some("boolean"), Some(Value::Bool(flag))) => ParameterValue::Boolean(*flag),
                (Some("dateTime"), Some(Value::Timestamp(at))) => {
                    ParameterValue::DateTime(Timestamp(at.0))
                }
                (Some("duration"), Some(Value::Long(millis))) => {
                    ParameterValue::Duration(TimeSpan(*millis))
                }
                _ => return Err(malformed()),
            };
            Ok(Parameter::new(name, value))
        })
        .collect()
}

fn malformed() -> BrokerError {
    BrokerError::Argument(
        "'parameters' must map each name to a [type, value] list of a known type".to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_reads_back_as_written() {
        let parameters = vec![
            Parameter::new("@s", ParameterValue::String("red".into())),
            Parameter::new("@i", ParameterValue::Int(3)),
            Parameter::new("@l", ParameterValue::Long(1 << 40)),
            Parameter::new("@d", ParameterValue::Double(0.5)),
            Parameter::new("@b", ParameterValue::Boolean(true)),
            Parameter::new("@t", ParameterValue::DateTime(Timestamp(1_700_000_000_000))),
            Parameter::new("@span", ParameterValue::Duration(TimeSpan(90_000))),
        ];
        let encoded = encode(&parameters).unwrap();
        assert_eq!(decode(Some(&encoded)).unwrap(), parameters);
        assert_eq!(encode(&[]), None);
        assert_eq!(decode(None).unwrap(), Vec::new());
    }

    #[test]
    fn a_malformed_map_is_refused() {
        let typed = |kind: &str, value: Value| {
            Value::Map(vec![(
                Value::from("@x"),
                Value::List(vec![Value::Symbol(Symbol::from(kind)), value]),
            )])
        };
        for bad in [
            Value::from("not a map"),
            typed("int", Value::Long(1)),
            typed("uuid", Value::Int(1)),
            Value::Map(vec![(Value::Int(1), Value::List(Vec::new()))]),
        ] {
            assert!(decode(Some(&bad)).is_err(), "{bad:?}");
        }
    }
}
