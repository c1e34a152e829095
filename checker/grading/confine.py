"""Confine a checked process's writes to a scratch folder of its own, so that a check can lose nothing,
and keep it from reading the reference solutions.

Called in the forked child, after it has switched user and before any learner code runs. Two layers:

- **Landlock** (Linux 5.13 and later, where the kernel has it on): the kernel refuses the child, and
  everything it starts, any file creation, write, truncation, removal or rename outside the scratch
  folder and /dev/null. Where the kernel's Landlock is recent enough it also refuses TCP (ABI 4, Linux
  6.7) and signals or abstract sockets to processes outside the check (ABI 6, Linux 6.12). It cannot be
  undone from inside. It does not cover a file's mode or owner (chmod, chown), nor files already open.
  For a job that runs learner code it also handles reading files: allowed beneath every folder but the
  hidden ones (the reference solutions), rule by rule around them, since Landlock only grants.
- **An audit hook** (every system): Python-level writes outside the scratch folder raise PermissionError
  naming the path and the rule, so the report says what was refused instead of a bare "Permission
  denied". On its own (macOS, Windows' WSL1, an older Linux, a container that hides Landlock) it only
  stops Python's own calls: code that reaches the OS another way (ctypes, a C extension) is not stopped.
  For an exam, run the grader in a container (README, "Threat model").
"""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile

from checker.grading import audit_hook

# From <linux/landlock.h>.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on x86_64 and aarch64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_WRITES_V1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))  # write, remove, make any kind of file
_REFER = 1 << 13  # ABI 2: link or rename a file into another folder
_TRUNCATE = 1 << 14  # ABI 3
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
_PR_SET_NO_NEW_PRIVS = 38

REFUSAL = "a check may write only in its own scratch folder (TMPDIR); this was refused"
HIDDEN = "a check may not read the course's reference solutions; this was refused"
_MARK = "gbcheck refused: "  # each refusal, as a line of the child's output, for the report


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (not Linux, too old, or switched off)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def confine(scratch: str, hidden: tuple[str, ...] = ()) -> str:
    """Allow writes only beneath `scratch` (and to /dev/null) from now on, and no reads beneath the folders
    `hidden` (the reference solutions); returns which layers hold.

    The audit hook is always installed; Landlock where the kernel has it. Raises OSError only when the
    kernel has Landlock and refuses a rule: the check then does not run (fail closed).
    """
    scratch = os.path.realpath(scratch)
    os.environ["TMPDIR"] = scratch
    os.environ["GBCHECK_CONFINED"] = "1"  # the checker's own caches are not written from here
    # Compiler caches the grader may already have located (torch keeps the first in the environment): the
    # checked code gets caches of its own, which no later check or grader reads.
    for name, folder in (("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton"),
                         ("CUDA_CACHE_PATH", "cuda")):
        os.environ[name] = os.path.join(scratch, folder)
    tempfile.tempdir = scratch
    layers = ["audit hook"]
    abi = landlock_abi()
    if abi:
        _restrict(scratch, abi, tuple(os.path.realpath(folder) for folder in hidden))
        layers.insert(0, f"Landlock ABI {abi}")
    audit_hook.watch(("open", *_PATH_EVENTS),
                     _refuse_writes_outside(scratch, tuple(os.path.realpath(folder) for folder in hidden)))
    return ", ".join(layers)


def _restrict(scratch: str, abi: int, hidden: tuple[str, ...]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    writes = _WRITES_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    reads = _READ_FILE if hidden else 0
    attr = _RulesetAttr(handled_access_fs=writes | reads,
                        handled_access_net=(_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0,
                        scoped=(_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16 if abi >= 4 else 8  # older kernels know a shorter struct
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        _allow(libc, ruleset, scratch, writes | reads)
        if hidden:  # reads everywhere but beneath `hidden`: allowed folder by folder around them
            _allow_reads_around(libc, ruleset, "/", hidden)
        _allow(libc, ruleset, os.devnull, _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0))
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def _allow(libc, ruleset: int, path: str, access: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneath(allowed_access=access, parent_fd=fd)
        if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {  # audit event -> positions of the paths it writes
    "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1), "os.link": (1,),
    "os.symlink": (1,), "os.truncate": (0,), "os.mkfifo": (0,), "os.mknod": (0,), "shutil.rmtree": (0,),
    "shutil.move": (0, 1), "shutil.copyfile": (1,), "shutil.copytree": (1,),
}


def _allow_reads_around(libc, ruleset: int, folder: str, hidden: tuple[str, ...]) -> None:
    """Allow reading files beneath every entry of `folder` except the hidden folders; into the entries that
    lead to one, recurse. A symbolic link is judged by where it leads (one into a hidden folder, or to a
    folder above one, would open it all)."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for entry in entries:
        path = os.path.join(folder, entry)
        real = os.path.realpath(path)
        if any(real == h or real.startswith(h + os.sep) for h in hidden):
            continue
        if any(h.startswith(real.rstrip(os.sep) + os.sep) for h in hidden):
            if real == path:
                _allow_reads_around(libc, ruleset, path, hidden)
            continue
        try:
            _allow(libc, ruleset, path, _READ_FILE)
        except OSError:
            continue  # gone since it was listed, or a kind of file Landlock takes no rule for


def _refuse_writes_outside(scratch: str, hidden: tuple[str, ...] = ()):
    allowed = (scratch + os.sep, os.devnull)

    def secret(path) -> bool:
        if isinstance(path, int) or path is None or not hidden:
            return False
        try:
            full = os.path.realpath(os.fsdecode(path))
        except OSError:
            return True
        return any(full == h or full.startswith(h + os.sep) for h in hidden)

    def inside(path) -> bool:
        if isinstance(path, int) or path is None:
            return True  # an open descriptor: Landlock judged it when it was opened
        try:
            full = os.path.realpath(os.fsdecode(path))
        except OSError:  # e.g. another process's /proc links, which the kernel will not let it read
            return False
        return full == scratch or full.startswith(allowed[0]) or full == os.devnull

    def hook(event: str, args: tuple) -> None:
        if event == "open":
            path, mode, flags = args
            writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool(flags & _WRITE_FLAGS)
            if secret(path):
                raise PermissionError(f"{HIDDEN}: {os.fsdecode(path)!r}")
            paths = (path,) if writes else ()
        else:
            positions = _PATH_EVENTS.get(event)
            if positions is None:
                return
            paths = tuple(args[i] for i in positions if i < len(args))
            if event == "os.mkdir" and all(os.path.isdir(os.fsdecode(p)) for p in paths):
                return  # makedirs(exist_ok=True) of a folder that is there: the OS says so, nothing changes
        for path in paths:
            if not inside(path):
                # Straight to the descriptor: no capture of sys.stderr by the learner's code swallows it.
                os.write(2, f"\n{_MARK}{event} {os.fsdecode(path)}\n".encode(errors="replace"))
                raise PermissionError(f"{REFUSAL}: {event} {os.fsdecode(path)!r}")

    return hook


def refused_writes(output: str) -> list[str]:
    """The writes the audit hook refused, read from a child's output (the child may hide them: it can only
    lose its own report's note, since Landlock refused the writes themselves)."""
    return list(dict.fromkeys(line[len(_MARK):] for line in output.splitlines() if line.startswith(_MARK)))


def writes_check(output: str):
    """The `writes-confined` check, failed, when the checked code tried to write outside its scratch folder;
    None when it did not. A fix never needs such a write, and one that tries may have meant to harm."""
    from checker.grading.report import FAIL, CheckResult

    refused = refused_writes(output)
    if not refused:
        return None
    by_folder: dict[str, list[str]] = {}
    for attempt in refused:
        event, _, path = attempt.partition(" ")
        by_folder.setdefault(os.path.dirname(path), []).append(attempt)
    shown = []
    for folder, attempts in by_folder.items():  # one line per folder: a loop over a folder's files stays short
        if len(attempts) == 1:
            shown.append(attempts[0])
        else:
            events = sorted({attempt.partition(" ")[0] for attempt in attempts})
            shown.append(f"{' and '.join(events)} of {len(attempts)} files in {folder}")
    return CheckResult("writes-confined", FAIL, f"Your code tried to write outside its scratch folder, and was "
                       f"refused: {'; '.join(shown)}. Nothing of yours was changed. A check may write only in TMPDIR.")
