//! Rules for programs that stop the machine or erase disks: shutdown, reboot, kill -1, mkfs,
//! wipefs, fdisk, diskutil erase.

use crate::judgement::Findings;

/// The rules of this family for one command.
pub(crate) fn check(f: &mut Findings) {
    let inv = f.inv;
    let args = inv.args();
    match inv.name.as_str() {
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            f.deny("system-power", "shuts down or reboots the machine")
        }
        "systemctl" | "loginctl"
            if args.iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "poweroff" | "reboot" | "halt" | "kexec" | "soft-reboot"
                )
            }) =>
        {
            f.deny("system-power", "shuts down or reboots the machine");
        }
        "init" | "telinit" if args.iter().any(|a| a.is("0") || a.is("6")) => {
            f.deny("system-power", "shuts down or reboots the machine");
        }
        "kill" if args.last().is_some_and(|a| a.is("-1")) => {
            f.deny(
                "system-power",
                "`kill -1` signals every process the user owns",
            );
        }
        name if (name.starts_with("mkfs")
            || matches!(
                name,
                "mke2fs"
                    | "mkswap"
                    | "wipefs"
                    | "blkdiscard"
                    | "mkdosfs"
                    | "mkntfs"
                    | "newfs"
                    | "zpool"
            ))
            && (name != "zpool"
                || args.first().is_some_and(|a| {
                    matches!(a.text.as_str(), "create" | "destroy" | "labelclear")
                })) =>
        {
            f.deny(
                "disk-format",
                format!("`{name}` creates or erases a file system"),
            );
        }
        "fdisk" | "sfdisk" | "cfdisk" | "gdisk" | "sgdisk" | "parted" => {
            let listing = args.iter().any(|a| {
                matches!(
                    a.text.as_str(),
                    "-l" | "--list" | "print" | "-p" | "--print"
                )
            });
            if !listing {
                f.deny("disk-format", format!("`{}` repartitions a disk", inv.name));
            }
        }
        "diskutil"
            if args.first().is_some_and(|a| {
                [
                    "erase",
                    "partition",
                    "zero",
                    "randomzero",
                    "secureerase",
                    "reformat",
                ]
                .iter()
                .any(|p| a.text.to_lowercase().starts_with(p))
            }) =>
        {
            f.deny("disk-format", "`diskutil` erases or repartitions a disk");
        }
        _ => {}
    }
}
