//! A hook process as cheap as a shell script's: `acp-gate hook AGENT` hands its call to a
//! resident server of the same binary, arguments and environment over a Unix socket, and says
//! what the server answered. The server keeps the chain loaded, and loads it again before a
//! call when a file it came from changed ([`crate::stamps`]) or the audit log was moved.
//!
//! The client ([`answered`]) is the first thing `acp-gate` runs, before the command line is
//! parsed or a runtime started: that start-up is what a call saves. Without a server (the
//! first call, one gone idle, `ACP_GATE_HOOK_RESIDENT=0`), or on any failure to reach one or
//! to hear its answer, the call is decided in its own process as before, and a server is
//! started for the calls after it. The server decides with the hook process's own path
//! ([`Decider::respond`]): the same decision, audit line and answer.
//!
//! Who may talk to it: the socket sits in a directory only this user can enter
//! (`$XDG_RUNTIME_DIR/acp-gate`, else, or where a socket's path would be too long there,
//! `/tmp/acp-gate-UID`; refused unless it is this user's own and private), and each side
//! checks the other's user id (`SO_PEERCRED`). With no such place a call says why on stderr
//! and is decided in its own process.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use super::once::{self, Decider, MAX_PAYLOAD, Received, Transport};
use super::reply::HookReply;
use super::status::reported;
use crate::LoadOptions;
use crate::acp::output;
use crate::args::{EscalationArgs, PolicyArgs};
use crate::config::LayerPaths;
use crate::request::hook::{Agent, HookCall};
use crate::service::ship::{Shipping, shippers};
use crate::stamps::Stamps;

/// What a call says first: the protocol and what it asks.
///
/// A call is `HELLO call AGENT LENGTH`, a newline and the payload; the server says `taken`
/// and decides only once the client says `go`. A client that gave up before `taken` came
/// (a busy server) decides the call itself, and the server, hearing no `go`, drops it:
/// one decision and one audit line per call, whoever makes it.
const HELLO: &str = "acp-gate-hook 2";
/// How long a client waits for the server to take its call before deciding it itself, and a
/// server for the client's `go`.
const TAKEN_WITHIN: Duration = Duration::from_secs(2);
/// How long a server with nothing to do stays, unless `$ACP_GATE_HOOK_IDLE` (seconds) says.
const IDLE: Duration = Duration::from_secs(600);

/// The variables acp-gate reads (and the families it reads by prefix, the proxies the review
/// service's client heeds, the dynamic loader's, OpenTelemetry's exporter settings): a server answers only calls whose values of
/// these are its own, since they are part of its socket's name.
const KEYED_VARIABLES: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "PATH",
    "NO_COLOR",
    "TZ",
    "CLAUDE_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "DOCKER_CONFIG",
    "COSIGN_PASSWORD",
];
const KEYED_PREFIXES: &[&str] = &[
    "ACP_GATE_",
    "XDG_",
    "GEMINI_CLI_",
    "SSL_CERT_",
    "LD_",
    "OTEL_",
];

fn keyed(name: &str) -> bool {
    KEYED_VARIABLES.contains(&name)
        || KEYED_PREFIXES.iter().any(|p| name.starts_with(p))
        || name.to_ascii_uppercase().ends_with("_PROXY")
}

/// The variable naming the socket of the session gate an agent's hooks go to: `run` and
/// `proxy` set it for the agents they start.
pub const SESSION_GATE: &str = "ACP_GATE_SESSION_GATE";

/// The input of a call the client did not hand over, for the command to decide itself, and
/// the server to start once it has.
static DECLINED: Mutex<Option<(Vec<u8>, Option<Start>)>> = Mutex::new(None);

/// A resident server to start: where it listens, for which agent's call and arguments.
pub struct Start {
    socket: PathBuf,
    agent: String,
    args: Vec<OsString>,
}

/// Answers `acp-gate hook AGENT [ARGS]` through a resident server when one serves this binary,
/// arguments, directory and environment: its exit code, the answer written. `None`: the
/// command goes on as usual ([`declined`] has the input read, if any).
pub fn answered() -> Option<u8> {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let [_, hook, agent, args @ ..] = argv.as_slice() else {
        return None;
    };
    let agent = agent.to_str().and_then(Agent::named)?;
    let asks_about_itself = args.iter().any(|a| {
        matches!(
            a.to_str(),
            Some("-h" | "--help" | "-V" | "--version" | "help")
        )
    });
    // SAFETY: isatty(3) on standard input.
    let typed = unsafe { libc::isatty(0) } == 1;
    let session = std::env::var_os(SESSION_GATE).filter(|socket| !socket.is_empty());
    if hook != "hook" || asks_about_itself || typed || (session.is_none() && !enabled()) {
        return None;
    }
    let mut input = Vec::with_capacity(16 << 10);
    std::io::stdin()
        .take(MAX_PAYLOAD)
        .read_to_end(&mut input)
        .ok()?;
    // A call of an agent that `run` or `proxy` started is answered by that session's gate,
    // which can ask the person or the editor; gone, the call is decided as any other.
    if let Some(session) = session {
        if let Ok(reply) = ask(Path::new(&session), None, agent, &input) {
            return Some(said(reply));
        }
        if !enabled() {
            *DECLINED.lock().unwrap_or_else(|p| p.into_inner()) = Some((input, None));
            return None;
        }
    }
    let here = Identity::here(args);
    let socket = match here.as_ref().map(socket) {
        Some(Ok(socket)) => Some(socket),
        Some(Err(why)) => {
            eprintln!(
                "acp-gate: no resident hook server ({why}); each call is decided in its own \
                 process (set XDG_RUNTIME_DIR to a shorter private directory, or \
                 ACP_GATE_HOOK_RESIDENT=0 to say so)"
            );
            None
        }
        None => None,
    };
    let reached = match (&socket, &here) {
        (Some(socket), Some(here)) => ask(socket, Some(here), agent, &input),
        _ => Err(Unanswered::Elsewhere),
    };
    match reached {
        Ok(reply) => Some(said(reply)),
        Err(why) => {
            let start = socket
                .filter(|_| why == Unanswered::NoServer)
                .map(|socket| Start {
                    socket,
                    agent: agent.name().to_owned(),
                    args: args.to_vec(),
                });
            *DECLINED.lock().unwrap_or_else(|p| p.into_inner()) = Some((input, start));
            None
        }
    }
}

/// Says a server's `reply` as the hook process: its exit code.
fn said(reply: HookReply) -> u8 {
    let _ = std::io::stdout().write_all(reply.stdout.as_bytes());
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
    reply.code
}

/// The input [`answered`] read and did not hand over, and the server to start when none was
/// there.
pub fn declined() -> Option<(Vec<u8>, Option<Start>)> {
    DECLINED.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Whether hook calls go to resident servers: unless `$ACP_GATE_HOOK_RESIDENT` says no.
pub(crate) fn enabled() -> bool {
    let said = std::env::var("ACP_GATE_HOOK_RESIDENT").unwrap_or_default();
    !matches!(
        said.to_ascii_lowercase().as_str(),
        "0" | "no" | "off" | "false"
    )
}

/// Why a call was not answered by a server.
#[derive(Debug, PartialEq, Eq)]
enum Unanswered {
    /// Nobody listens on its socket: one can be started.
    NoServer,
    /// Anything else: decided here, and nothing started.
    Elsewhere,
}

/// A server's answer, as it travels.
#[derive(Serialize, Deserialize)]
struct Wire {
    code: u8,
    stdout: String,
    stderr: String,
}

/// Hands the call `input` of `agent` to the server on `socket`, and waits for its answer,
/// believed if the server is this user's and, for a resident server, the one for `here` (a
/// session's gate is the one its agent was started by: the socket its variable names).
fn ask(
    socket: &Path,
    here: Option<&Identity>,
    agent: Agent,
    input: &[u8],
) -> Result<HookReply, Unanswered> {
    let mut stream = UnixStream::connect(socket).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            Unanswered::NoServer
        }
        _ => Unanswered::Elsewhere,
    })?;
    let fail = |_| Unanswered::Elsewhere;
    if peer_uid(&stream) != Some(uid()) {
        return Err(Unanswered::Elsewhere);
    }
    stream.set_write_timeout(Some(TAKEN_WITHIN)).map_err(fail)?;
    stream.set_read_timeout(Some(TAKEN_WITHIN)).map_err(fail)?;
    let hello = format!("{HELLO} call {} {}\n", agent.name(), input.len());
    stream.write_all(hello.as_bytes()).map_err(fail)?;
    stream.write_all(input).map_err(fail)?;
    let mut taken = [0; 6];
    stream.read_exact(&mut taken).map_err(fail)?;
    if &taken != b"taken\n" {
        return Err(Unanswered::Elsewhere);
    }
    // From `go` on the server decides it, as this process would, within the same bounds; it
    // is no longer this process's to decide (unless the server dies before it answers, or is
    // not one to believe).
    stream.write_all(b"go\n").map_err(fail)?;
    stream.shutdown(std::net::Shutdown::Write).map_err(fail)?;
    // While it decides: whether its answer is to be believed (the call itself is no secret
    // from the user's own processes, which can read the agent's transcript).
    if here.is_some_and(|here| !genuine(&stream, socket, here)) {
        return Err(Unanswered::Elsewhere);
    }
    stream.set_read_timeout(None).map_err(fail)?;
    let mut answer = Vec::with_capacity(16 << 10);
    stream.read_to_end(&mut answer).map_err(fail)?;
    let wire: Wire = serde_json::from_slice(&answer).map_err(|_| Unanswered::Elsewhere)?;
    Ok(HookReply {
        stdout: wire.stdout,
        stderr: wire.stderr,
        code: wire.code,
    })
}

/// The socket of the server that answers for `here`; else why there is none.
fn socket(here: &Identity) -> Result<PathBuf, String> {
    socket_named(&format!("hook-{}.sock", here.name()))
}

/// A socket for a session's gate (`run`, `proxy`); else why there is none.
pub fn session_socket() -> Result<PathBuf, String> {
    let pid = std::process::id();
    socket_named(&format!(
        "session-{pid}-{}.sock",
        crate::digest::random_hex(4)
    ))
}

/// The socket `name` in the first of the user's private directories where its path fits in a
/// `sockaddr_un`; else why there is none.
fn socket_named(name: &str) -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    for dir in places() {
        let socket = dir.join(name);
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            tried.push(format!(
                "{} is too long for a socket's path",
                socket.display()
            ));
        } else if private(&dir, true) {
            return Ok(socket);
        } else {
            tried.push(format!(
                "{} is not a directory only this user can enter",
                dir.display()
            ));
        }
    }
    Err(tried.join("; "))
}

/// The longest path a Unix socket can have (`sun_path` holds 108 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 107;

/// What a server's decisions depend on besides the files it watches: the binary, the
/// directory, the arguments, the variables acp-gate reads (and the loader's, which change what
/// code runs). A server answers only calls made with all of them the same as its own.
#[derive(Debug, PartialEq, Eq)]
struct Identity {
    exe: PathBuf,
    /// The binary's device, inode, size and modification time.
    stamp: [u64; 5],
    cwd: PathBuf,
    args: Vec<OsString>,
    /// The keyed ones only, sorted.
    variables: Vec<(OsString, OsString)>,
}

impl Identity {
    /// This process's, for a call with `args`.
    fn here(args: &[OsString]) -> Option<Identity> {
        let exe = std::env::current_exe().ok()?;
        Some(Identity {
            stamp: stamp(&std::fs::metadata(&exe).ok()?),
            exe,
            cwd: std::env::current_dir().ok()?,
            args: args.to_vec(),
            variables: keyed_only(std::env::vars_os()),
        })
    }

    /// The server's own, read from `/proc`: `None` unless it is a resident server's command
    /// line for `socket`, and nothing traces it.
    fn of_server(pid: i32, socket: &Path) -> Option<Identity> {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let status = read_proc(&proc.join("status"))?;
        if !status
            .split(|b| *b == b'\n')
            .any(|line| line == b"TracerPid:\t0")
        {
            return None;
        }
        let split = |bytes: Vec<u8>| -> Vec<OsString> {
            bytes
                .split(|b| *b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| OsStr::from_bytes(part).to_owned())
                .collect()
        };
        let argv = split(read_proc(&proc.join("cmdline"))?);
        let [_, hook, resident, dash_socket, at, dash_agent, _, args @ ..] = argv.as_slice() else {
            return None;
        };
        let expected = [hook, resident, dash_socket, dash_agent]
            == ["hook", "resident", "--socket", "--agent"];
        if !expected || Path::new(at) != socket {
            return None;
        }
        let variables = split(read_proc(&proc.join("environ"))?)
            .into_iter()
            .filter_map(|pair| {
                let bytes = pair.as_bytes();
                let equals = bytes.iter().position(|b| *b == b'=')?;
                let (name, value) = (&bytes[..equals], &bytes[equals + 1..]);
                Some((
                    OsStr::from_bytes(name).into(),
                    OsStr::from_bytes(value).into(),
                ))
            });
        Some(Identity {
            exe: std::fs::read_link(proc.join("exe")).ok()?,
            stamp: stamp(&std::fs::metadata(proc.join("exe")).ok()?),
            cwd: std::fs::read_link(proc.join("cwd")).ok()?,
            args: args.to_vec(),
            variables: keyed_only(variables),
        })
    }

    /// The name of its server's socket: 16 hexadecimal digits of a hash of it (not a
    /// safeguard: the server is checked against the whole, [`genuine`]).
    fn name(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        self.hash(&mut hasher);
        format!("{:016x}", hasher.finish())
    }
}

impl std::hash::Hash for Identity {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (
            &self.exe,
            self.stamp,
            &self.cwd,
            &self.args,
            &self.variables,
        )
            .hash(state);
    }
}

/// A binary's device, inode, size and modification time.
fn stamp(meta: &std::fs::Metadata) -> [u64; 5] {
    [
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime() as u64,
        meta.mtime_nsec() as u64,
    ]
}

/// The variables of `all` that are part of a server's identity, sorted.
fn keyed_only(all: impl Iterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    let mut keyed: Vec<_> = all
        .filter(|(name, _)| name.to_str().is_some_and(keyed))
        .collect();
    keyed.sort();
    keyed
}

/// A file of `/proc` (which says it is empty: it is made as it is read), in a few reads.
fn read_proc(path: &Path) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(16 << 10);
    std::fs::File::open(path)
        .ok()?
        .take(MAX_PAYLOAD)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// Where this user's resident servers may listen, in order: `$XDG_RUNTIME_DIR/acp-gate`, then
/// `acp-gate-UID` in the temporary directory and in `/tmp` (short enough for a socket's path
/// when the others are too deep).
fn places() -> Vec<PathBuf> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|runtime| runtime.is_absolute())
        .map(|runtime| runtime.join("acp-gate"));
    let own = format!("acp-gate-{}", uid());
    let mut places: Vec<PathBuf> = runtime.into_iter().collect();
    for tmp in [std::env::temp_dir(), PathBuf::from("/tmp")] {
        let place = tmp.join(&own);
        if !places.contains(&place) {
            places.push(place);
        }
    }
    places
}

/// Whether `dir` is a directory of this user's that nobody else may enter (made so first, when
/// `make` and it is missing).
fn private(dir: &Path, make: bool) -> bool {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(_) if make => {
            let _ = std::fs::DirBuilder::new().mode(0o700).create(dir);
            match std::fs::symlink_metadata(dir) {
                Ok(meta) => meta,
                Err(_) => return false,
            }
        }
        Err(_) => return false,
    };
    meta.is_dir() && meta.uid() == uid() && meta.mode() & 0o077 == 0
}

fn uid() -> u32 {
    // SAFETY: getuid(2) cannot fail.
    unsafe { libc::getuid() }
}

/// Whether the process at the other end of `stream` is the server a call here would have
/// started on `socket`: this user's, untraced, its command line one for `socket`, and its
/// binary, directory, arguments and variables those of `here`. A program of
/// the user's that took the socket is not one (nor is acp-gate started there with other
/// arguments or variables); what is left is what the user's processes can always do to the
/// user's (docs/security.md).
fn genuine(stream: &UnixStream, socket: &Path, here: &Identity) -> bool {
    let Some(peer) = peer(stream).filter(|peer| peer.uid == uid()) else {
        return false;
    };
    Identity::of_server(peer.pid, socket).is_some_and(|server| server == *here)
}

/// The user id of the process at the other end of `socket`.
fn peer_uid(socket: &impl std::os::fd::AsRawFd) -> Option<u32> {
    peer(socket).map(|peer| peer.uid)
}

/// The process at the other end of `socket`: its pid and user id.
fn peer(socket: &impl std::os::fd::AsRawFd) -> Option<libc::ucred> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: u32::MAX,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt(2) writing at most `len` bytes into `cred`.
    let done = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (done == 0).then_some(cred)
}

impl Start {
    /// Starts the server in the background, on its own: in a session of its own, with none of
    /// this process's streams (the agent reads the hook's output until the last holder closes
    /// it), its own messages in a log beside its socket. Best effort: without it, calls are
    /// decided in their own processes.
    pub fn spawn(self) {
        use std::os::unix::process::CommandExt;
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(self.socket.with_extension("log"));
        let mut command = std::process::Command::new(exe);
        command
            .args([
                OsStr::new("hook"),
                OsStr::new("resident"),
                OsStr::new("--socket"),
            ])
            .arg(&self.socket)
            .args(["--agent", &self.agent])
            .args(&self.args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(match log {
                Ok(log) => log.into(),
                Err(_) => std::process::Stdio::null(),
            });
        // SAFETY: setsid(2) in the child before exec: async-signal-safe, touches no memory.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let _ = command.spawn();
    }
}

/// A chain kept loaded, with what it was loaded for and from.
struct Kept {
    agent: Agent,
    options: LoadOptions,
    layers: LayerPaths,
    decider: Decider,
    stamps: Stamps,
    /// The audit log's file when it was opened: moved away, the chain is loaded again, to
    /// write where the process would.
    audit: Option<(u64, u64)>,
    /// What loading it said on stderr, said again with each call, as a process would.
    notices: String,
}

/// The audit log file at `path`: its device and inode.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Kept {
    fn current(&self) -> bool {
        self.stamps.fresh() && identity(self.decider.gate.audit_path()) == self.audit
    }
}

/// A resident server: the chains it keeps, and what it has done.
struct Server {
    policy: PolicyArgs,
    escalation: EscalationArgs,
    kept: Mutex<Vec<Arc<Kept>>>,
    calls: AtomicU64,
    busy: AtomicUsize,
    last: Mutex<Instant>,
    stop: tokio::sync::Notify,
    /// The audit logs it ships to a review service while it runs, by where their cursors are
    /// kept (a log and a service): as `hook serve` does, so that an org's review service sees
    /// the calls of every developer's terminal agents without an `audit ship`.
    shipping: Mutex<HashMap<PathBuf, Shipping>>,
}

/// The most chains a server keeps (one per agent and workspace it has seen).
const MAX_KEPT: usize = 8;

impl Server {
    /// The chain for a call of `agent`: kept, when nothing it came from changed; else loaded
    /// (and kept, when every plugin of it loaded).
    async fn chain(&self, agent: Agent, call: Option<&HookCall>) -> Result<Arc<Kept>> {
        let options = once::load_options(agent, call, &self.policy)?;
        let layers = crate::layer_paths(&options)?;
        let found = lock(&self.kept)
            .iter()
            .find(|k| k.agent == agent && k.options == options && k.layers == layers)
            .cloned();
        if let Some(kept) = found.filter(|kept| kept.current()) {
            return Ok(kept);
        }
        let load = Decider::load(Some(agent), &options, None, &self.escalation);
        let ((decider, notices), stamps) = crate::stamps::recording(output::captured(load)).await;
        let decider = decider?;
        let audit = decider.gate.audit_path();
        let service = (decider.escalator.as_ref()).map(|e| {
            e.gate_shipper(
                audit,
                decider.gate.chain(),
                "hook server",
                reported(&options.workspace),
            )
        });
        for shipper in shippers(audit, service)? {
            lock(&self.shipping)
                .entry(shipper.cursor_path())
                .or_insert_with(|| Shipping::start(shipper));
        }
        let whole = decider.gate.chain().load_failures().next().is_none();
        let kept = Arc::new(Kept {
            agent,
            audit: identity(decider.gate.audit_path()),
            options,
            layers,
            decider,
            stamps,
            notices,
        });
        let mut all = lock(&self.kept);
        all.retain(|k| !(k.agent == agent && k.options == kept.options));
        if whole {
            if all.len() >= MAX_KEPT {
                all.remove(0);
            }
            all.push(kept.clone());
        }
        Ok(kept)
    }

    /// Decides the call `input` of `agent` as a hook process would.
    async fn decide(&self, agent: Agent, input: &[u8]) -> HookReply {
        let received = Received::read(agent, input);
        let kept = match self.chain(agent, received.call.as_ref().ok()).await {
            Ok(kept) => kept,
            Err(error) => return once::refuse(agent, &received, Transport::Process, &error),
        };
        let respond = kept.decider.respond(agent, received, Transport::Process);
        let (mut reply, said) = output::captured(respond).await;
        reply.stderr = format!("{}{said}{}", kept.notices, reply.stderr);
        reply
    }

    /// One connection: a call, or `stop`. Anything else, or a peer of another user, is
    /// dropped unanswered.
    async fn connection(&self, mut stream: tokio::net::UnixStream) -> Result<()> {
        if !this_users(&stream) {
            return Ok(());
        }
        let (reader, mut writer) = stream.split();
        let mut reader = tokio::io::BufReader::new(reader);
        match incoming(&mut reader, &mut writer).await? {
            Incoming::Call(agent, input) => {
                let reply = self.decide(agent, &input).await;
                self.calls.fetch_add(1, Ordering::Relaxed);
                send_reply(&mut writer, reply).await?;
            }
            Incoming::Stop => {
                let calls = self.calls.load(Ordering::Relaxed);
                let said = serde_json::json!({ "stopped": true, "calls": calls });
                writer.write_all(said.to_string().as_bytes()).await?;
                self.stop.notify_one();
            }
            Incoming::Nothing => {}
        }
        Ok(())
    }
}

/// What a connection to a server of hook calls asks, read.
pub enum Incoming {
    /// A call of this agent's, with its payload, taken and confirmed (`go`): the server's to
    /// decide and answer ([`send_reply`]).
    Call(Agent, Vec<u8>),
    /// `acp-gate hook stop`.
    Stop,
    /// Nothing to answer: another user's peer, a call its client gave up on, or garbage.
    Nothing,
}

/// Whether the peer of a server's `stream` is this user's: no other is heard.
pub fn this_users(stream: &tokio::net::UnixStream) -> bool {
    peer_uid(stream) == Some(uid())
}

/// Reads what the peer on `reader` (its other half `writer`) asks; a call is taken (`taken`)
/// and waited on until its client says `go` (see [`HELLO`]).
pub async fn incoming<R, W>(reader: &mut R, writer: &mut W) -> Result<Incoming>
where
    R: tokio::io::AsyncBufRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let mut hello = String::new();
    (&mut *reader).take(128).read_line(&mut hello).await?;
    let asked = hello.trim_end().strip_prefix(HELLO).unwrap_or_default();
    match asked.split_whitespace().collect::<Vec<_>>()[..] {
        ["call", agent, length] => {
            let (Some(agent), Ok(length)) = (Agent::named(agent), length.parse::<u64>()) else {
                return Ok(Incoming::Nothing);
            };
            let mut input = Vec::new();
            (&mut *reader)
                .take(length.min(MAX_PAYLOAD))
                .read_to_end(&mut input)
                .await?;
            if input.len() as u64 != length {
                return Ok(Incoming::Nothing);
            }
            writer.write_all(b"taken\n").await?;
            let mut go = String::new();
            let mut limited = (&mut *reader).take(8);
            let said = limited.read_line(&mut go);
            match tokio::time::timeout(TAKEN_WITHIN, said).await {
                Ok(Ok(_)) if go == "go\n" => Ok(Incoming::Call(agent, input)),
                // The client gave up waiting and decides the call itself.
                _ => Ok(Incoming::Nothing),
            }
        }
        ["stop"] => Ok(Incoming::Stop),
        _ => Ok(Incoming::Nothing),
    }
}

/// Sends a call's answer to its client.
pub async fn send_reply<W: tokio::io::AsyncWrite + Unpin>(
    writer: &mut W,
    reply: HookReply,
) -> Result<()> {
    let wire = Wire {
        code: reply.code,
        stdout: reply.stdout,
        stderr: reply.stderr,
    };
    writer.write_all(&serde_json::to_vec(&wire)?).await?;
    Ok(())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// `acp-gate hook resident`: serves the calls of hook processes on `socket` until it has had
/// nothing to do for `$ACP_GATE_HOOK_IDLE` seconds, is stopped (`acp-gate hook stop`) or
/// signalled. Only one serves a socket: another started for it leaves at once.
pub async fn serve(
    socket: &Path,
    agent: Agent,
    policy: PolicyArgs,
    escalation: EscalationArgs,
) -> Result<u8> {
    // A server that was just stopped may still be on its way out.
    let Some(_held) = hold(socket, Duration::from_secs(3))? else {
        return Ok(crate::exit::OK);
    };
    let _ = std::fs::remove_file(socket);
    let listener = tokio::net::UnixListener::bind(socket)
        .with_context(|| format!("cannot listen on {}", socket.display()))?;
    std::fs::set_permissions(socket, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    let bound = identity(socket);
    let server = Arc::new(Server {
        policy,
        escalation,
        kept: Mutex::new(Vec::new()),
        calls: AtomicU64::new(0),
        busy: AtomicUsize::new(0),
        last: Mutex::new(Instant::now()),
        stop: tokio::sync::Notify::new(),
        shipping: Mutex::new(HashMap::new()),
    });
    // The chain the first calls need, loaded before they come.
    let _ = server.chain(agent, None).await;
    let idle = std::env::var("ACP_GATE_HOOK_IDLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(IDLE);
    let signal = crate::exit::terminated();
    tokio::pin!(signal);
    let code = loop {
        let tick = tokio::time::sleep(idle.min(Duration::from_secs(1)));
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let server = server.clone();
                server.busy.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let _ = server.connection(stream).await;
                    *lock(&server.last) = Instant::now();
                    server.busy.fetch_sub(1, Ordering::SeqCst);
                });
            }
            () = tick => {
                let quiet = server.busy.load(Ordering::SeqCst) == 0;
                if quiet && lock(&server.last).elapsed() >= idle {
                    break crate::exit::OK;
                }
                // Its socket taken away (a cleaner of temporary files): no call can reach it,
                // and the server started in its place waits for its lock.
                if identity(socket) != bound {
                    break crate::exit::OK;
                }
            }
            () = server.stop.notified() => break crate::exit::OK,
            code = &mut signal => break code,
        }
    };
    // New calls find no server (and start one, once this one lets go of the lock); the calls
    // under way are answered first. A socket in its place is another server's.
    if identity(socket) == bound {
        let _ = std::fs::remove_file(socket);
    }
    drop(listener);
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.busy.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // What its calls recorded goes to the review service before it leaves (what cannot go
    // stays in the log, for the next gate or `audit ship`).
    let shipping: Vec<Shipping> = lock(&server.shipping).drain().map(|(_, s)| s).collect();
    for error in Shipping::finish_all(shipping).await {
        eprintln!("acp-gate: {error:#}");
    }
    Ok(code)
}

/// The lock only the server of `socket` holds, once it is free (within `patience`); `None`
/// when another server keeps it.
fn hold(socket: &Path, patience: Duration) -> Result<Option<std::fs::File>> {
    let path = socket.with_extension("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("{}: cannot open", path.display()))?;
    let deadline = Instant::now() + patience;
    loop {
        let exclusive = rustix::fs::FlockOperation::NonBlockingLockExclusive;
        if rustix::fs::flock(&file, exclusive).is_ok() {
            return Ok(Some(file));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `acp-gate hook stop`: stops this user's resident servers, and returns once they have ended
/// (and what ended servers left is taken away): how many were stopped, and the calls they had
/// served.
pub fn stop_all() -> Result<(usize, u64)> {
    let (mut stopped, mut calls) = (0, 0);
    for dir in places().into_iter().filter(|dir| private(dir, false)) {
        let (in_dir, served) = stop_in(&dir)?;
        stopped += in_dir;
        calls += served;
    }
    Ok((stopped, calls))
}

/// How many of this user's resident servers are running: those that hold their socket's lock,
/// asked nothing (a call would keep one from going idle).
pub(crate) fn running() -> Result<usize> {
    let mut running = 0;
    for dir in places().into_iter().filter(|dir| private(dir, false)) {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("{}", dir.display()))? {
            let lock = entry?.path();
            let name = lock.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with("hook-")
                && name.ends_with(".lock")
                && hold(&lock.with_extension("sock"), Duration::ZERO)?.is_none()
            {
                running += 1;
            }
        }
    }
    Ok(running)
}

/// Stops the servers listening in `dir`, and takes away what ended ones left there.
fn stop_in(dir: &Path) -> Result<(usize, u64)> {
    let (mut stopped, mut calls) = (0, 0);
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if !(name.starts_with("hook-") && name.ends_with(".sock")) {
            continue;
        }
        let said = (|| -> std::io::Result<serde_json::Value> {
            let mut stream = UnixStream::connect(&path)?;
            if peer_uid(&stream) != Some(uid()) {
                return Err(std::io::Error::other("another user's"));
            }
            stream.set_read_timeout(Some(TAKEN_WITHIN))?;
            stream.write_all(format!("{HELLO} stop\n").as_bytes())?;
            stream.shutdown(std::net::Shutdown::Write)?;
            let mut answer = String::new();
            std::io::BufReader::new(stream).read_line(&mut answer)?;
            Ok(serde_json::from_str(&answer)?)
        })();
        match said {
            Ok(said) => {
                stopped += 1;
                calls += said["calls"].as_u64().unwrap_or(0);
                // Stopped once it has let go of its lock: nothing of it runs any more.
                hold(&path, Duration::from_secs(10))?;
            }
            // Left by a server that ended without taking it away.
            Err(_) => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    // What ended servers left: a lock nobody holds, and an empty log.
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let lock = entry?.path();
        let name = lock.file_name().unwrap_or_default().to_string_lossy();
        if !(name.starts_with("hook-") && name.ends_with(".lock")) {
            continue;
        }
        let socket = lock.with_extension("sock");
        if !socket.exists() && hold(&socket, Duration::ZERO)?.is_some() {
            let _ = std::fs::remove_file(&lock);
            let log = lock.with_extension("log");
            if std::fs::metadata(&log).is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(&log);
            }
        }
    }
    Ok((stopped, calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server hears a call out, but decides it only once its client says `go`: a client
    /// that gave up first (and decides the call itself) leaves it nothing to decide.
    #[tokio::test]
    async fn a_call_is_the_server_s_to_decide_only_once_its_client_says_go() {
        for go in [true, false] {
            let (client, server) = tokio::net::UnixStream::pair().unwrap();
            let client = tokio::spawn(async move {
                let mut client = client;
                let input = br#"{"tool_name": "Bash"}"#;
                let hello = format!("{HELLO} call claude {}\n", input.len());
                client.write_all(hello.as_bytes()).await.unwrap();
                client.write_all(input).await.unwrap();
                let mut taken = [0; 6];
                client.read_exact(&mut taken).await.unwrap();
                assert_eq!(&taken, b"taken\n");
                if go {
                    client.write_all(b"go\n").await.unwrap();
                }
                // Gone either way: said `go`, or gave up.
            });
            let mut server = server;
            let (reader, mut writer) = server.split();
            let mut reader = tokio::io::BufReader::new(reader);
            let heard = incoming(&mut reader, &mut writer).await.unwrap();
            client.await.unwrap();
            match (go, heard) {
                (true, Incoming::Call(Agent::Claude, input)) => {
                    assert_eq!(input, br#"{"tool_name": "Bash"}"#)
                }
                (false, Incoming::Nothing) => {}
                (go, _) => panic!("go = {go}: the server heard the wrong thing"),
            }
        }
    }

    /// Every variable acp-gate's sources read is part of a server's key: a server must not
    /// answer a call made with another value of one.
    #[test]
    fn every_variable_acp_gate_reads_is_keyed() {
        let read = regex::Regex::new(r#"var(?:_os)?\("([A-Za-z0-9_]+)"\)"#).unwrap();
        let mut seen = 0;
        for (path, text) in crate::crate_sources() {
            for name in read.captures_iter(&text).map(|c| c[1].to_owned()) {
                seen += 1;
                assert!(keyed(&name), "{}: ${name} is not keyed", path.display());
            }
        }
        assert!(seen > 20, "found only {seen} reads of variables");
        assert!(keyed("https_proxy") && keyed("ACP_GATE_ORG_HANDLERS"));
        assert!(!keyed("TERM_SESSION_ID") && !keyed("SHLVL"));
    }
}
