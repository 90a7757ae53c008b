//! Small disks for one test, unmounted when dropped: a size-capped tmpfs to fill, and an ext4
//! filesystem whose device fails under it. Mounting needs root: without it the test says so and
//! is skipped, except under CI (`CI=true`), where these tests must run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `mebibytes` on a fresh directory under `parent`; `None` (skipped)
    /// where mounting is not allowed outside CI.
    pub fn mount(parent: &Path, mebibytes: u64) -> Option<Tmpfs> {
        let dir = parent.join("tmpfs");
        std::fs::create_dir_all(&dir).unwrap();
        let size = format!("size={mebibytes}m");
        mounted(run("mount", &["-t", "tmpfs", "-o", &size, "tmpfs"], &dir)).then_some(Tmpfs { dir })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes a file of zeros of `mebibytes` (pages tmpfs must hold) at `name`.
    pub fn ballast(&self, name: &str, mebibytes: usize) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, vec![0u8; mebibytes << 20]).unwrap();
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = run("umount", &["-l"], &self.dir);
    }
}

/// An ext4 filesystem on a loop device whose (sparse) image lies on a smaller tmpfs: once the
/// tmpfs is full, the device's writes fail, and so does the next fsync on the ext4 — a disk
/// failing under the store, with nothing faked.
pub struct FailingDisk {
    outer: Tmpfs,
    device: String,
    mount_point: PathBuf,
}

impl FailingDisk {
    /// An ext4 of `inner` MiB on a tmpfs of `outer` MiB; `None` (skipped) as for [`Tmpfs`].
    pub fn new(parent: &Path, outer: u64, inner: u64) -> Option<FailingDisk> {
        let outer = Tmpfs::mount(parent, outer)?;
        let image = outer.path().join("ext4.img");
        let size = format!("{inner}M");
        assert!(run("truncate", &["-s", &size], &image).is_ok_and(|o| o.status.success()));
        assert!(run("mkfs.ext4", &["-q"], &image).is_ok_and(|o| o.status.success()));
        let attached = run("losetup", &["-f", "--show"], &image).unwrap();
        assert!(attached.status.success(), "losetup: {attached:?}");
        let device = String::from_utf8(attached.stdout)
            .unwrap()
            .trim()
            .to_owned();
        let mount_point = parent.join("ext4");
        std::fs::create_dir_all(&mount_point).unwrap();
        let disk = FailingDisk {
            outer,
            device,
            mount_point,
        };
        disk.mount();
        Some(disk)
    }

    pub fn path(&self) -> &Path {
        &self.mount_point
    }

    /// Gives the device room again, checks the filesystem (its journal was aborted) and mounts
    /// it back, as an operator would before restarting the broker.
    pub fn repair(&self) {
        let _ = run("umount", &[], &self.mount_point);
        let grown = run("mount", &["-o", "remount,size=1g"], self.outer.path()).unwrap();
        assert!(grown.status.success(), "{grown:?}");
        // 0 clean, 1 corrected: both leave a mountable filesystem.
        let checked = run("e2fsck", &["-fy"], Path::new(&self.device)).unwrap();
        assert!(matches!(checked.status.code(), Some(0 | 1)), "{checked:?}");
        self.mount();
    }

    fn mount(&self) {
        let mounted = run("mount", &[&self.device], &self.mount_point).unwrap();
        assert!(mounted.status.success(), "{mounted:?}");
    }
}

impl Drop for FailingDisk {
    fn drop(&mut self) {
        let _ = run("umount", &["-l"], &self.mount_point);
        let _ = run("losetup", &["-d"], Path::new(&self.device));
    }
}

/// Runs `program ARGS PATH`.
fn run(program: &str, args: &[&str], path: &Path) -> std::io::Result<Output> {
    Command::new(program).args(args).arg(path).output()
}

/// Whether a mount worked; a failure skips the test outside CI and fails it under CI.
fn mounted(output: std::io::Result<Output>) -> bool {
    match output {
        Ok(output) if output.status.success() => true,
        failed if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
            panic!("CI must be able to mount a tmpfs (run as root): {failed:?}")
        }
        failed => {
            eprintln!("skipped: cannot mount a tmpfs (not root?): {failed:?}");
            false
        }
    }
}
