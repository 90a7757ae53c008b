//! List paging (§5): `$skip` / `$top` in, which slice to answer and the `rel="next"` link out.
//! JS and Java follow that link, Python takes the feed's second link, .NET and Go count.

use std::ops::Range;

use super::error::AtomError;

/// The page a list request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageRequest {
    /// Entries to skip (`$skip`, default 0).
    pub skip: usize,
    /// Most entries to return (`$top`, default [`PageRequest::DEFAULT_TOP`]; JS and Go never
    /// send it).
    pub top: usize,
}

impl Default for PageRequest {
    fn default() -> PageRequest {
        PageRequest {
            skip: 0,
            top: PageRequest::DEFAULT_TOP,
        }
    }
}

impl PageRequest {
    /// The service's page size.
    pub const DEFAULT_TOP: usize = 100;

    /// Reads `$skip` and `$top` from a raw query string (with or without its `?`), in either
    /// spelling: `$skip` or percent-encoded `%24skip`. Other parameters are ignored.
    pub fn from_query(query: &str) -> Result<PageRequest, AtomError> {
        let mut page = PageRequest::default();
        for pair in query.trim_start_matches('?').split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decode(value);
            match percent_decode(key).as_str() {
                "$skip" => {
                    page.skip = value.parse().map_err(|_| {
                        AtomError::invalid("$skip", &value, "a non-negative integer")
                    })?;
                }
                "$top" => {
                    page.top =
                        value.parse().ok().filter(|&top| top > 0).ok_or_else(|| {
                            AtomError::invalid("$top", &value, "a positive integer")
                        })?;
                }
                _ => {}
            }
        }
        Ok(page)
    }

    /// The positions, in a stable listing of `total` entries, that this page shows (empty past
    /// the end).
    pub fn window(&self, total: usize) -> Range<usize> {
        let start = self.skip.min(total);
        start..self.skip.saturating_add(self.top).min(total)
    }

    /// The page after this one, if entries remain after it.
    pub fn next_page(&self, total: usize) -> Option<PageRequest> {
        let end = self.window(total).end;
        (end < total).then_some(PageRequest {
            skip: end,
            top: self.top,
        })
    }

    /// The `href` of a link to this page: `request_url` with its `$skip` and `$top` replaced
    /// where they stand, or appended (`…?api-version=2021-05&$skip=100&$top=100`).
    pub fn link_href(&self, request_url: &str) -> String {
        let (base, query) = request_url.split_once('?').unwrap_or((request_url, ""));
        let mut skip = Some(format!("$skip={}", self.skip));
        let mut top = Some(format!("$top={}", self.top));
        let mut pairs: Vec<String> = Vec::new();
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let key = percent_decode(pair.split_once('=').map_or(pair, |(key, _)| key));
            match key.as_str() {
                // A repeated parameter is dropped: the first one stands for it.
                "$skip" => pairs.extend(skip.take()),
                "$top" => pairs.extend(top.take()),
                _ => pairs.push(pair.to_owned()),
            }
        }
        pairs.extend(skip);
        pairs.extend(top);
        format!("{base}?{}", pairs.join("&"))
    }
}

/// Decodes `%XX` escapes; anything malformed is kept as it is, and bytes that are not UTF-8
/// become U+FFFD.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = bytes
            .get(index + 1..index + 3)
            .filter(|_| bytes[index] == b'%')
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_spellings() {
        let python = PageRequest::from_query("%24skip=100&%24top=100&api-version=2024-05");
        assert_eq!(
            python,
            Ok(PageRequest {
                skip: 100,
                top: 100
            })
        );
        let js = PageRequest::from_query("?api-version=2021-05&$skip=100");
        assert_eq!(
            js,
            Ok(PageRequest {
                skip: 100,
                top: 100
            })
        );
        assert_eq!(PageRequest::from_query(""), Ok(PageRequest::default()));
        assert!(PageRequest::from_query("$skip=-1").is_err());
        assert!(PageRequest::from_query("$top=0").is_err());
        assert!(PageRequest::from_query("$top=ten").is_err());
    }

    #[test]
    fn windows_and_next_pages() {
        let first = PageRequest::default();
        assert_eq!(first.window(106), 0..100);
        let second = first.next_page(106).expect("more remain");
        assert_eq!(
            second,
            PageRequest {
                skip: 100,
                top: 100
            }
        );
        assert_eq!(second.window(106), 100..106);
        assert_eq!(second.next_page(106), None);
        assert_eq!(
            PageRequest {
                skip: 100,
                top: 100
            }
            .next_page(100),
            None
        );
        let past_the_end = PageRequest {
            skip: 500,
            top: 100,
        };
        assert_eq!(past_the_end.window(106), 106..106);
        assert_eq!(past_the_end.next_page(106), None);
        assert_eq!(
            PageRequest {
                skip: usize::MAX,
                top: usize::MAX
            }
            .window(3),
            3..3
        );
    }

    #[test]
    fn next_links_as_the_traces_show() {
        let next = PageRequest {
            skip: 100,
            top: 100,
        };
        assert_eq!(
            next.link_href(
                "https://127.0.0.1:5399/$Resources/queues?%24skip=0&%24top=100&api-version=2024-05"
            ),
            "https://127.0.0.1:5399/$Resources/queues?$skip=100&$top=100&api-version=2024-05"
        );
        assert_eq!(
            next.link_href("https://127.0.0.1:5399/$Resources/Queues?api-version=2021-05"),
            "https://127.0.0.1:5399/$Resources/Queues?api-version=2021-05&$skip=100&$top=100"
        );
        assert_eq!(
            next.link_href("https://h/t/Subscriptions"),
            "https://h/t/Subscriptions?$skip=100&$top=100"
        );
    }

    #[test]
    fn percent_decoding_keeps_malformed_escapes() {
        assert_eq!(percent_decode("%24skip"), "$skip");
        assert_eq!(percent_decode("%2"), "%2");
        assert_eq!(percent_decode("%zz%"), "%zz%");
        assert_eq!(percent_decode("%C3%A9"), "é");
    }
}
