//! `application/x-www-form-urlencoded` (a form's body, a query string): `+` is a space and
//! `%XX` a byte; repeated names are kept in order (the re-drive form's check boxes).

use crate::atom::percent_decode;

/// The decoded fields of a form body or query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Form(Vec<(String, String)>);

impl Form {
    /// Parses `text`; malformed escapes are kept as they are.
    pub(crate) fn parse(text: &str) -> Form {
        Form(
            text.split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                    (decode(name), decode(value))
                })
                .collect(),
        )
    }

    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The first value of `name`, or `""`.
    pub(crate) fn text(&self, name: &str) -> &str {
        self.get(name).unwrap_or_default()
    }

    /// The first value of `name` if it is not blank.
    pub(crate) fn non_empty(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
    }

    /// Every value of `name`, in order.
    pub(crate) fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        self.0
            .iter()
            .filter(move |(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

fn decode(text: &str) -> String {
    percent_decode(&text.replace('+', " "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_plus_escapes_and_repeats() {
        let form = Form::parse("a=1+2%2B3&seq=4&seq=5&empty&bad=%zz&=x");
        assert_eq!(form.get("a"), Some("1 2+3"));
        assert_eq!(form.all("seq").collect::<Vec<_>>(), ["4", "5"]);
        assert_eq!(form.get("empty"), Some(""));
        assert_eq!(form.get("bad"), Some("%zz"));
        assert_eq!(form.non_empty("empty"), None);
        assert_eq!(form.text("missing"), "");
    }
}
