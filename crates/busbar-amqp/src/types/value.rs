//! The AMQP 1.0 value model (§1.6): `Value` and the small newtypes it is built from.

use std::fmt;

use bytes::Bytes;

use crate::error::DecodeError;

/// An AMQP `symbol`: an ASCII name such as `amqp:decode-error` or `com.microsoft:timeout`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Symbol(String);

impl Symbol {
    /// Wraps a name as a symbol.
    pub fn new(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    /// The symbol's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Symbol {
    fn from(name: &str) -> Self {
        Self(name.to_owned())
    }
}

impl From<String> for Symbol {
    fn from(name: String) -> Self {
        Self(name)
    }
}

impl PartialEq<str> for Symbol {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Symbol {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An AMQP `timestamp`: milliseconds since the Unix epoch (may be negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Timestamp(pub i64);

/// An AMQP `uuid`: 16 bytes in RFC 4122 (big-endian) order, as they travel on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Uuid(pub [u8; 16]);

/// What identifies a described type: a numeric code (`ulong`) or a symbolic name; any other
/// value is allowed by §1.2 (and seen from some encoders, e.g. a null descriptor on arrays) and
/// is kept as it came.
#[derive(Debug, Clone, PartialEq)]
pub enum Descriptor {
    /// Numeric descriptor, `domain << 32 | id` (e.g. `0x10` for `open`).
    Code(u64),
    /// Symbolic descriptor (e.g. `amqp:open:list`).
    Symbol(Symbol),
    /// A descriptor of another type.
    Other(Box<Value>),
}

impl Descriptor {
    /// Whether this descriptor names the type with the given code or symbolic name.
    pub fn matches(&self, code: u64, name: &str) -> bool {
        match self {
            Self::Code(c) => *c == code,
            Self::Symbol(s) => s.as_str() == name,
            Self::Other(_) => false,
        }
    }
}

/// A described value: a descriptor followed by the value it describes.
#[derive(Debug, Clone, PartialEq)]
pub struct Described {
    /// What the value means.
    pub descriptor: Descriptor,
    /// The underlying value.
    pub value: Value,
}

/// The type of an array's elements: one constructor shared by every element (§1.6.24 ff.).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// `null`.
    Null,
    /// `boolean`.
    Bool,
    /// `ubyte`.
    Ubyte,
    /// `ushort`.
    Ushort,
    /// `uint`.
    Uint,
    /// `ulong`.
    Ulong,
    /// `byte`.
    Byte,
    /// `short`.
    Short,
    /// `int`.
    Int,
    /// `long`.
    Long,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `decimal32`.
    Decimal32,
    /// `decimal64`.
    Decimal64,
    /// `decimal128`.
    Decimal128,
    /// `char`.
    Char,
    /// `timestamp`.
    Timestamp,
    /// `uuid`.
    Uuid,
    /// `binary`.
    Binary,
    /// `string`.
    String,
    /// `symbol`.
    Symbol,
    /// `list`.
    List,
    /// `map`.
    Map,
    /// `array`.
    Array,
}

/// An AMQP array: elements of one type, optionally all carrying one descriptor.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    descriptor: Option<Descriptor>,
    element: ElementType,
    items: Vec<Value>,
}

impl Array {
    /// An array of `element` values; fails if an item is of another type (described items are
    /// not allowed: use [`Array::described`] to describe every element at once).
    pub fn new(element: ElementType, items: Vec<Value>) -> Result<Self, DecodeError> {
        match items
            .iter()
            .find(|item| item.element_type() != Some(element))
        {
            Some(item) => Err(DecodeError::UnexpectedType {
                expected: element.name(),
                found: item.type_name(),
            }),
            None => Ok(Self {
                descriptor: None,
                element,
                items,
            }),
        }
    }

    /// An array of symbols (the AMQP `multiple` encoding of capabilities and mechanisms).
    pub fn of_symbols(symbols: impl IntoIterator<Item = Symbol>) -> Self {
        Self {
            descriptor: None,
            element: ElementType::Symbol,
            items: symbols.into_iter().map(Value::Symbol).collect(),
        }
    }

    /// The same array with every element described by `descriptor`.
    pub fn described(mut self, descriptor: Descriptor) -> Self {
        self.descriptor = Some(descriptor);
        self
    }

    /// The descriptor shared by every element, if any.
    pub fn descriptor(&self) -> Option<&Descriptor> {
        self.descriptor.as_ref()
    }

    /// The elements' type.
    pub fn element_type(&self) -> ElementType {
        self.element
    }

    /// The elements (without their descriptor).
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// The elements, by value.
    pub fn into_items(self) -> Vec<Value> {
        self.items
    }

    pub(crate) fn from_parts(
        descriptor: Option<Descriptor>,
        element: ElementType,
        items: Vec<Value>,
    ) -> Self {
        Self {
            descriptor,
            element,
            items,
        }
    }
}

/// Any AMQP 1.0 value (§1.6). Maps keep wire order and may repeat keys.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `boolean`.
    Bool(bool),
    /// `ubyte`.
    Ubyte(u8),
    /// `ushort`.
    Ushort(u16),
    /// `uint`.
    Uint(u32),
    /// `ulong`.
    Ulong(u64),
    /// `byte`.
    Byte(i8),
    /// `short`.
    Short(i16),
    /// `int`.
    Int(i32),
    /// `long`.
    Long(i64),
    /// `float` (IEEE 754 binary32).
    Float(f32),
    /// `double` (IEEE 754 binary64).
    Double(f64),
    /// `decimal32`, raw IEEE 754 decimal bytes (big-endian as on the wire).
    Decimal32([u8; 4]),
    /// `decimal64`, raw bytes.
    Decimal64([u8; 8]),
    /// `decimal128`, raw bytes.
    Decimal128([u8; 16]),
    /// `char` (a UTF-32 code point).
    Char(char),
    /// `timestamp`.
    Timestamp(Timestamp),
    /// `uuid`.
    Uuid(Uuid),
    /// `binary`, shared with the buffer it was decoded from.
    Binary(Bytes),
    /// `string`.
    String(String),
    /// `symbol`.
    Symbol(Symbol),
    /// `list`.
    List(Vec<Value>),
    /// `map`, in wire order.
    Map(Vec<(Value, Value)>),
    /// `array`.
    Array(Array),
    /// A described value.
    Described(Box<Described>),
}

impl Value {
    /// A described value.
    pub fn described(descriptor: Descriptor, value: Value) -> Self {
        Self::Described(Box::new(Described { descriptor, value }))
    }

    /// The AMQP name of this value's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self.element_type() {
            Some(element) => element.name(),
            None => "described",
        }
    }

    /// The array element type this value would have, or `None` for a described value.
    pub fn element_type(&self) -> Option<ElementType> {
        Some(match self {
            Self::Null => ElementType::Null,
            Self::Bool(_) => ElementType::Bool,
            Self::Ubyte(_) => ElementType::Ubyte,
            Self::Ushort(_) => ElementType::Ushort,
            Self::Uint(_) => ElementType::Uint,
            Self::Ulong(_) => ElementType::Ulong,
            Self::Byte(_) => ElementType::Byte,
            Self::Short(_) => ElementType::Short,
            Self::Int(_) => ElementType::Int,
            Self::Long(_) => ElementType::Long,
            Self::Float(_) => ElementType::Float,
            Self::Double(_) => ElementType::Double,
            Self::Decimal32(_) => ElementType::Decimal32,
            Self::Decimal64(_) => ElementType::Decimal64,
            Self::Decimal128(_) => ElementType::Decimal128,
            Self::Char(_) => ElementType::Char,
            Self::Timestamp(_) => ElementType::Timestamp,
            Self::Uuid(_) => ElementType::Uuid,
            Self::Binary(_) => ElementType::Binary,
            Self::String(_) => ElementType::String,
            Self::Symbol(_) => ElementType::Symbol,
            Self::List(_) => ElementType::List,
            Self::Map(_) => ElementType::Map,
            Self::Array(_) => ElementType::Array,
            Self::Described(_) => return None,
        })
    }

    /// The text of a `string` value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The name of a `symbol` value.
    pub fn as_symbol(&self) -> Option<&Symbol> {
        match self {
            Self::Symbol(s) => Some(s),
            _ => None,
        }
    }

    /// The entries of a `map` value.
    pub fn as_map(&self) -> Option<&[(Value, Value)]> {
        match self {
            Self::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// Whether this value is a string or symbol with the given text (map keys are either).
    pub fn is_key(&self, key: &str) -> bool {
        match self {
            Self::String(s) => s == key,
            Self::Symbol(s) => s.as_str() == key,
            _ => false,
        }
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Self::String(text.to_owned())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Self::String(text)
    }
}

impl From<Symbol> for Value {
    fn from(symbol: Symbol) -> Self {
        Self::Symbol(symbol)
    }
}

impl ElementType {
    /// The AMQP name of the type.
    pub fn name(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool => "boolean",
            Self::Ubyte => "ubyte",
            Self::Ushort => "ushort",
            Self::Uint => "uint",
            Self::Ulong => "ulong",
            Self::Byte => "byte",
            Self::Short => "short",
            Self::Int => "int",
            Self::Long => "long",
            Self::Float => "float",
            Self::Double => "double",
            Self::Decimal32 => "decimal32",
            Self::Decimal64 => "decimal64",
            Self::Decimal128 => "decimal128",
            Self::Char => "char",
            Self::Timestamp => "timestamp",
            Self::Uuid => "uuid",
            Self::Binary => "binary",
            Self::String => "string",
            Self::Symbol => "symbol",
            Self::List => "list",
            Self::Map => "map",
            Self::Array => "array",
        }
    }
}
