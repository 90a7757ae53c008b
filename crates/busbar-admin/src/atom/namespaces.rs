//! The XML namespace URIs of the administration API (§6.1). Elements are matched by local name
//! *and* one of these URIs, never by prefix: the SDKs bind them to `ns0:`, `p4:`, `xsi:`, `i:`,
//! `_XMLSchema-instance:`, `d2p1:`, … or make them the default namespace.

/// Atom: `entry`, `feed`, `content`, `id`, `title`, `link`, ….
pub const ATOM: &str = "http://www.w3.org/2005/Atom";

/// Every description element and child (`QueueDescription`, `LockDuration`, `Filter`, …).
pub const SERVICE_BUS: &str = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect";

/// The children of `CountDetails`; Python reads no counts unless they are in it.
pub const SERVICE_BUS_COUNTS: &str = "http://schemas.microsoft.com/netservices/2011/06/servicebus";

/// `type` attributes of filters, actions, authorization rules and typed values.
pub const XML_SCHEMA_INSTANCE: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// The prefix *inside* typed values' `i:type="d6p1:string"`.
pub const XML_SCHEMA: &str = "http://www.w3.org/2001/XMLSchema";
