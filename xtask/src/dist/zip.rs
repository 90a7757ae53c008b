//! A minimal zip writer (deflated entries, Unix modes, fixed timestamps): enough for a wheel or
//! a jar, which are zip archives with a few files of metadata.

use flate2::Crc;
use flate2::write::DeflateEncoder;
use std::io::Write;

/// An archive being built in memory.
#[derive(Default)]
pub(crate) struct Zip {
    bytes: Vec<u8>,
    central: Vec<u8>,
    entries: u16,
}

/// 1980-01-01 00:00, the earliest zip time: archives do not change with the build's time.
const DOS_DATE: u16 = (1 << 5) | 1;
const DOS_TIME: u16 = 0;
const DEFLATE: u16 = 8;
const VERSION: u16 = 20;
/// "Made by" Unix (3), so the external attributes carry the file mode.
const MADE_BY_UNIX: u16 = (3 << 8) | VERSION;

impl Zip {
    /// Adds a file with its Unix `mode` (0o644, 0o755).
    pub(crate) fn add(&mut self, name: &str, contents: &[u8], mode: u32) -> Result<(), String> {
        let mut crc = Crc::new();
        crc.update(contents);
        let mut encoder = DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        encoder
            .write_all(contents)
            .map_err(|e| format!("cannot compress {name}: {e}"))?;
        let compressed = encoder
            .finish()
            .map_err(|e| format!("cannot compress {name}: {e}"))?;
        let too_big = |_| format!("{name} is too large for a zip archive without zip64");
        let size = u32::try_from(contents.len()).map_err(too_big)?;
        let packed = u32::try_from(compressed.len()).map_err(too_big)?;
        let offset = u32::try_from(self.bytes.len()).map_err(too_big)?;
        let name_len = u16::try_from(name.len()).map_err(|_| format!("{name}: name too long"))?;
        let common = |out: &mut Vec<u8>| {
            for half in [0, DEFLATE, DOS_TIME, DOS_DATE] {
                out.extend_from_slice(&half.to_le_bytes());
            }
            for word in [crc.sum(), packed, size] {
                out.extend_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(&name_len.to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes()); // extra field length
        };
        self.bytes.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        self.bytes.extend_from_slice(&VERSION.to_le_bytes());
        common(&mut self.bytes);
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.extend_from_slice(&compressed);

        self.central
            .extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        self.central.extend_from_slice(&MADE_BY_UNIX.to_le_bytes());
        self.central.extend_from_slice(&VERSION.to_le_bytes());
        common(&mut self.central);
        // Comment length, disk number, internal attributes.
        self.central.extend_from_slice(&[0; 6]);
        self.central
            .extend_from_slice(&((0o100_000 | mode) << 16).to_le_bytes());
        self.central.extend_from_slice(&offset.to_le_bytes());
        self.central.extend_from_slice(name.as_bytes());
        self.entries += 1;
        Ok(())
    }

    /// The finished archive: the entries, the central directory and its end record.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>, String> {
        let too_big = |_| "the archive is too large for zip without zip64".to_owned();
        let central_offset = u32::try_from(self.bytes.len()).map_err(too_big)?;
        let central_size = u32::try_from(self.central.len()).map_err(too_big)?;
        self.bytes.extend_from_slice(&self.central);
        self.bytes.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        self.bytes.extend_from_slice(&[0; 4]); // this disk, the central directory's disk
        self.bytes.extend_from_slice(&self.entries.to_le_bytes());
        self.bytes.extend_from_slice(&self.entries.to_le_bytes());
        self.bytes.extend_from_slice(&central_size.to_le_bytes());
        self.bytes.extend_from_slice(&central_offset.to_le_bytes());
        self.bytes.extend_from_slice(&0u16.to_le_bytes()); // comment length
        Ok(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::Zip;

    fn u16_at(bytes: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([bytes[at], bytes[at + 1]])
    }

    fn u32_at(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    }

    #[test]
    fn the_end_record_counts_the_entries_and_points_at_the_central_directory() {
        let mut zip = Zip::default();
        zip.add("a.txt", b"hello", 0o644).unwrap();
        zip.add("bin/tool", &[0u8; 4096], 0o755).unwrap();
        let bytes = zip.finish().unwrap();
        let end = bytes.len() - 22;
        assert_eq!(u32_at(&bytes, end), 0x0605_4b50);
        assert_eq!(u16_at(&bytes, end + 10), 2);
        let central = usize::try_from(u32_at(&bytes, end + 16)).unwrap();
        assert_eq!(u32_at(&bytes, central), 0x0201_4b50);
        // The first entry: CRC-32 of "hello", its size, and its Unix mode.
        assert_eq!(u32_at(&bytes, central + 16), 0x3610_a686);
        assert_eq!(u32_at(&bytes, central + 24), 5);
        assert_eq!(u32_at(&bytes, central + 38) >> 16, 0o100_644);
        assert_eq!(&bytes[central + 46..central + 51], b"a.txt");
    }
}
