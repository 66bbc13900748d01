//! The data path of torchnative's process group (`torch._C._distributed_c10d.ProcessGroupGloo`):
//! a full mesh of TCP connections between the ranks of one group, a reader thread per peer that
//! drains its socket into a mailbox, and the reductions.
//!
//! Why a mailbox: a send never waits for the peer to post a receive (the peer's reader thread
//! always drains the socket), so no ordering of sends and receives across ranks can deadlock,
//! and a peer that dies is seen at once (its reader hits EOF) by every receive that waits on it.
//! Messages are framed `(tag u64, len u64, payload)`; per (peer, tag) they arrive in send order.
//!
//! `allreduce` is gloo's ring (gloo/allreduce.cc): the same segments (at most 1 MiB, a multiple
//! of the context size, at least two per rank) and the same chain of reductions, so each
//! element's value is bit-identical with upstream's gloo for floats. The orchestration of the
//! other collectives lives in Python (`torchnative_core/c10d/process_group.py`) on top of
//! `send`/`recv_into`/`reduce_into`, all of which run without the GIL.

use half::{bf16, f16};
use pyo3::exceptions::{PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

const HELLO_MAGIC: u64 = 0x746e_6331_3064_0001; // "tnc10d" + protocol version 1
const MAX_SEGMENT_BYTES: usize = 1024 * 1024; // gloo's AllreduceOptionsImpl::kMaxSegmentSize

/// Why an operation failed: Python turns these into upstream's exception types.
enum Fail {
    Timeout(String),
    Peer(String),
    Bad(String),
}

impl From<Fail> for PyErr {
    fn from(f: Fail) -> PyErr {
        match f {
            Fail::Timeout(m) => PyTimeoutError::new_err(m),
            Fail::Peer(m) => PyRuntimeError::new_err(m),
            Fail::Bad(m) => PyValueError::new_err(m),
        }
    }
}

#[derive(Default)]
struct Inbox {
    queues: HashMap<(usize, u64), VecDeque<Vec<u8>>>,
    gone: HashMap<usize, String>,
}

struct Shared {
    inbox: Mutex<Inbox>,
    arrived: Condvar,
    // Segment-sized receive buffers, reused: a fresh 1 MiB allocation per segment costs page
    // faults that dominate the ring's bandwidth.
    pool: Mutex<Vec<Vec<u8>>>,
}

const POOL_MAX_BUFFERS: usize = 64;
const POOL_MAX_BYTES: usize = 2 * MAX_SEGMENT_BYTES;

impl Shared {
    fn buffer(&self, len: usize) -> Vec<u8> {
        let mut buf = if len <= POOL_MAX_BYTES {
            self.pool.lock().unwrap().pop().unwrap_or_default()
        } else {
            Vec::new()
        };
        buf.clear();
        buf.resize(len, 0);
        buf
    }
}

#[pyclass(module = "torch._C._distributed_c10d", name = "_TnMesh")]
pub struct Mesh {
    rank: usize,
    size: usize,
    listener: Mutex<Option<TcpListener>>,
    port: u16,
    writers: OnceLock<Vec<Option<Mutex<TcpStream>>>>,
    shared: Arc<Shared>,
}

fn write_frame(w: &mut TcpStream, tag: u64, data: &[u8]) -> std::io::Result<()> {
    let mut head = [0u8; 16];
    head[..8].copy_from_slice(&tag.to_le_bytes());
    head[8..].copy_from_slice(&(data.len() as u64).to_le_bytes());
    w.write_all(&head)?;
    w.write_all(data)
}

fn read_u64(r: &mut TcpStream) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn reader_loop(mut sock: TcpStream, peer: usize, shared: Arc<Shared>) {
    let reason = loop {
        let tag = match read_u64(&mut sock) {
            Ok(t) => t,
            Err(e) => break format!("connection to rank {peer} closed ({e})"),
        };
        let len = match read_u64(&mut sock) {
            Ok(n) => n as usize,
            Err(e) => break format!("connection to rank {peer} closed ({e})"),
        };
        let mut buf = shared.buffer(len);
        if let Err(e) = sock.read_exact(&mut buf) {
            break format!("connection to rank {peer} closed mid-message ({e})");
        }
        let mut inbox = shared.inbox.lock().unwrap();
        inbox.queues.entry((peer, tag)).or_default().push_back(buf);
        drop(inbox);
        shared.arrived.notify_all();
    };
    let mut inbox = shared.inbox.lock().unwrap();
    inbox.gone.entry(peer).or_insert(reason);
    drop(inbox);
    shared.arrived.notify_all();
}

fn deadline(timeout_s: f64) -> Instant {
    Instant::now() + Duration::from_secs_f64(timeout_s.clamp(0.0, 1.0e7))
}

impl Mesh {
    fn writers(&self) -> Result<&Vec<Option<Mutex<TcpStream>>>, Fail> {
        self.writers
            .get()
            .ok_or_else(|| Fail::Bad("mesh is not connected".into()))
    }

    fn check_peer(&self, peer: usize) -> Result<(), Fail> {
        if peer >= self.size {
            return Err(Fail::Bad(format!(
                "rank {peer} is out of range for a group of size {}",
                self.size
            )));
        }
        Ok(())
    }

    fn send_raw(&self, peer: usize, tag: u64, data: &[u8]) -> Result<(), Fail> {
        self.check_peer(peer)?;
        if peer == self.rank {
            let mut buf = self.shared.buffer(data.len());
            buf.copy_from_slice(data);
            let mut inbox = self.shared.inbox.lock().unwrap();
            inbox.queues.entry((peer, tag)).or_default().push_back(buf);
            drop(inbox);
            self.shared.arrived.notify_all();
            return Ok(());
        }
        let w = self.writers()?[peer]
            .as_ref()
            .expect("a peer other than self has a connection");
        let mut sock = w.lock().unwrap();
        write_frame(&mut sock, tag, data)
            .map_err(|e| Fail::Peer(format!("sending to rank {peer} failed: {e}")))
    }

    fn recv_raw(&self, peer: usize, tag: u64, until: Instant) -> Result<Vec<u8>, Fail> {
        self.check_peer(peer)?;
        let mut inbox = self.shared.inbox.lock().unwrap();
        loop {
            if let Some(q) = inbox.queues.get_mut(&(peer, tag)) {
                if let Some(buf) = q.pop_front() {
                    if q.is_empty() {
                        inbox.queues.remove(&(peer, tag));
                    }
                    return Ok(buf);
                }
            }
            if let Some(why) = inbox.gone.get(&peer) {
                return Err(Fail::Peer(why.clone()));
            }
            let now = Instant::now();
            if now >= until {
                return Err(Fail::Timeout(format!(
                    "timed out waiting for data from rank {peer}"
                )));
            }
            inbox = self
                .shared
                .arrived
                .wait_timeout(inbox, until - now)
                .unwrap()
                .0;
        }
    }

    fn recv_exact(
        &self,
        peer: usize,
        tag: u64,
        dst: &mut [u8],
        until: Instant,
    ) -> Result<(), Fail> {
        let buf = self.recv_raw(peer, tag, until)?;
        if buf.len() != dst.len() {
            return Err(Fail::Bad(format!(
                "rank {peer} sent {} bytes where {} were expected",
                buf.len(),
                dst.len()
            )));
        }
        dst.copy_from_slice(&buf);
        self.recycle(buf);
        Ok(())
    }

    fn recycle(&self, buf: Vec<u8>) {
        if buf.capacity() <= POOL_MAX_BYTES {
            let mut pool = self.shared.pool.lock().unwrap();
            if pool.len() < POOL_MAX_BUFFERS {
                pool.push(buf);
            }
        }
    }

    /// gloo's ring allreduce over `data` (one buffer, used as input and output).
    /// `header`: (tag, bytes) sent to every rank before the data and compared with theirs
    /// after the first segments are out, so the argument check costs no round trip of its own;
    /// on any difference nothing is reduced and every rank's header is returned.
    fn ring_allreduce(
        &self,
        data: &mut [u8],
        esize: usize,
        red: Reducer,
        tag: u64,
        until: Instant,
        header: Option<(u64, &[u8])>,
    ) -> Result<Option<Vec<Vec<u8>>>, Fail> {
        let n = self.size;
        let total = data.len();
        if n == 1 {
            return Ok(None);
        }
        if let Some((htag, mine)) = header {
            for p in (0..n).filter(|p| *p != self.rank) {
                self.send_raw(p, htag, mine)?;
            }
        }
        let check = |this: &Self| -> Result<Option<Vec<Vec<u8>>>, Fail> {
            let Some((htag, mine)) = header else {
                return Ok(None);
            };
            let mut all = Vec::with_capacity(n);
            let mut same = true;
            for p in 0..n {
                let got = if p == this.rank {
                    mine.to_vec()
                } else {
                    this.recv_raw(p, htag, until)?
                };
                same &= got == mine;
                all.push(got);
            }
            Ok(if same { None } else { Some(all) })
        };
        if total == 0 {
            return check(self);
        }
        let round_up = |x: usize, m: usize| x.div_ceil(m) * m;
        let max_seg = esize * (MAX_SEGMENT_BYTES / esize).max(1);
        let num_segments = round_up(total.div_ceil(max_seg).max(2 * n), n);
        let per_rank = num_segments / n;
        let seg_bytes = round_up(total.div_ceil(num_segments), esize);
        let span = num_segments * seg_bytes;
        let recv_rank = (self.rank + 1) % n;
        let send_rank = (self.rank + n - 1) % n;
        let range = |chunk: usize, i: usize| {
            let off = ((chunk * per_rank + i) * seg_bytes) % span;
            let len = seg_bytes.min(total.saturating_sub(off));
            (off, len)
        };
        // Reduce-scatter: segment s of chunk c travels c-1 -> c-2 -> ... -> c, each rank
        // reducing (its own value, what it received), as gloo does. The segment sent at step
        // i + per_rank is the one received and reduced at step i, so the first per_rank sends
        // (local data) go out at once and the ring runs per_rank segments deep.
        let steps = num_segments - per_rank;
        for i in 0..per_rank.min(steps) {
            let (so, sl) = range(self.rank + 1, i);
            if sl > 0 {
                self.send_raw(send_rank, tag, &data[so..so + sl])?;
            }
        }
        if let Some(headers) = check(self)? {
            return Ok(Some(headers));
        }
        for i in 0..steps {
            let (ro, rl) = range(self.rank + 2, i);
            if rl > 0 {
                let got = self.recv_raw(recv_rank, tag, until)?;
                if got.len() != rl {
                    return Err(Fail::Bad(format!(
                        "rank {recv_rank} sent a segment of {} bytes, expected {rl}",
                        got.len()
                    )));
                }
                red.apply(&mut data[ro..ro + rl], &got);
                self.recycle(got);
                if i + per_rank < steps {
                    self.send_raw(send_rank, tag, &data[ro..ro + rl])?;
                }
            }
        }
        // Allgather: the reduced chunks travel the same ring, forwarded as they arrive.
        for i in 0..per_rank.min(steps) {
            let (so, sl) = range(self.rank, i);
            if sl > 0 {
                self.send_raw(send_rank, tag, &data[so..so + sl])?;
            }
        }
        for i in 0..steps {
            let (ro, rl) = range(self.rank + 1, i);
            if rl > 0 {
                self.recv_exact(recv_rank, tag, &mut data[ro..ro + rl], until)?;
                if i + per_rank < steps {
                    self.send_raw(send_rank, tag, &data[ro..ro + rl])?;
                }
            }
        }
        Ok(None)
    }
}

/// SAFETY of the raw-address entry points: Python passes the address and byte length of a
/// contiguous CPU tensor it keeps alive (and does not touch) for the duration of the call.
unsafe fn bytes_at<'a>(addr: usize, nbytes: usize) -> &'a mut [u8] {
    if nbytes == 0 {
        return &mut [];
    }
    std::slice::from_raw_parts_mut(addr as *mut u8, nbytes)
}

#[pymethods]
impl Mesh {
    /// Binds a listener on `host` (port 0: the kernel picks one).
    #[new]
    fn new(rank: usize, size: usize, host: &str) -> PyResult<Self> {
        if size == 0 || rank >= size {
            return Err(PyValueError::new_err(format!(
                "invalid rank {rank} for a group of size {size}"
            )));
        }
        let listener = TcpListener::bind((host, 0))
            .map_err(|e| PyRuntimeError::new_err(format!("cannot listen on {host}: {e}")))?;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        Ok(Mesh {
            rank,
            size,
            listener: Mutex::new(Some(listener)),
            port,
            writers: OnceLock::new(),
            shared: Arc::new(Shared {
                inbox: Mutex::new(Inbox::default()),
                arrived: Condvar::new(),
                pool: Mutex::new(Vec::new()),
            }),
        })
    }

    #[getter]
    fn port(&self) -> u16 {
        self.port
    }

    /// Connects the full mesh: rank r dials every lower rank and accepts every higher one.
    /// `addrs[j]` is rank j's "host:port"; `session` tells this group's connections apart.
    fn connect(
        &self,
        py: Python<'_>,
        addrs: Vec<String>,
        session: u64,
        timeout_s: f64,
    ) -> PyResult<()> {
        if addrs.len() != self.size {
            return Err(PyValueError::new_err("one address per rank is needed"));
        }
        let listener = self
            .listener
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("mesh already connected"))?;
        let (rank, size) = (self.rank, self.size);
        let socks = py.allow_threads(move || -> Result<Vec<Option<TcpStream>>, Fail> {
            let until = deadline(timeout_s);
            let mut socks: Vec<Option<TcpStream>> = (0..size).map(|_| None).collect();
            for (peer, addr) in addrs.iter().enumerate().take(rank) {
                let target: SocketAddr = addr
                    .to_socket_addrs()
                    .ok()
                    .and_then(|mut a| a.next())
                    .ok_or_else(|| {
                        Fail::Bad(format!(
                            "rank {peer} published an unusable address {addr:?}"
                        ))
                    })?;
                let mut sock = loop {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(Fail::Timeout(format!(
                            "timed out connecting to rank {peer} at {addr}"
                        )));
                    }
                    match TcpStream::connect_timeout(&target, left.min(Duration::from_secs(5))) {
                        Ok(s) => break s,
                        Err(_) => std::thread::sleep(Duration::from_millis(20)),
                    }
                };
                let mut hello = Vec::with_capacity(32);
                for v in [HELLO_MAGIC, session, rank as u64, size as u64] {
                    hello.extend_from_slice(&v.to_le_bytes());
                }
                sock.write_all(&hello)
                    .map_err(|e| Fail::Peer(format!("greeting rank {peer} failed: {e}")))?;
                socks[peer] = Some(sock);
            }
            listener
                .set_nonblocking(true)
                .map_err(|e| Fail::Peer(e.to_string()))?;
            let mut missing = size - rank - 1;
            while missing > 0 {
                match listener.accept() {
                    Ok((mut sock, _)) => {
                        sock.set_nonblocking(false).ok();
                        sock.set_read_timeout(Some(
                            until
                                .saturating_duration_since(Instant::now())
                                .max(Duration::from_millis(1)),
                        ))
                        .ok();
                        let mut vals = [0u64; 4];
                        let ok = vals
                            .iter_mut()
                            .all(|v| read_u64(&mut sock).map(|x| *v = x).is_ok());
                        let peer = vals[2] as usize;
                        // A stray or stale connection (another group, an old run) is dropped.
                        if ok
                            && vals[0] == HELLO_MAGIC
                            && vals[1] == session
                            && vals[3] as usize == size
                            && peer > rank
                            && peer < size
                            && socks[peer].is_none()
                        {
                            sock.set_read_timeout(None).ok();
                            socks[peer] = Some(sock);
                            missing -= 1;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        if Instant::now() >= until {
                            let absent: Vec<String> = ((rank + 1)..size)
                                .filter(|p| socks[*p].is_none())
                                .map(|p| p.to_string())
                                .collect();
                            return Err(Fail::Timeout(format!(
                                "timed out waiting for rank(s) {} to connect",
                                absent.join(", ")
                            )));
                        }
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    Err(e) => return Err(Fail::Peer(format!("accept failed: {e}"))),
                }
            }
            Ok(socks)
        })?;
        let mut writers = Vec::with_capacity(size);
        for (peer, sock) in socks.into_iter().enumerate() {
            match sock {
                None => writers.push(None),
                Some(s) => {
                    s.set_nodelay(true).ok();
                    let reader = s
                        .try_clone()
                        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                    let shared = self.shared.clone();
                    std::thread::Builder::new()
                        .name(format!("tn-c10d-rank{peer}"))
                        .spawn(move || reader_loop(reader, peer, shared))
                        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                    writers.push(Some(Mutex::new(s)));
                }
            }
        }
        self.writers
            .set(writers)
            .map_err(|_| PyRuntimeError::new_err("mesh already connected"))?;
        Ok(())
    }

    /// Closes every connection; peers see EOF, their readers mark this rank gone.
    fn close(&self) {
        if let Some(ws) = self.writers.get() {
            for w in ws.iter().flatten() {
                let _ = w.lock().unwrap().shutdown(Shutdown::Both);
            }
        }
        let mut inbox = self.shared.inbox.lock().unwrap();
        for p in 0..self.size {
            if p != self.rank {
                inbox
                    .gone
                    .entry(p)
                    .or_insert_with(|| "this process group was shut down".into());
            }
        }
        drop(inbox);
        self.shared.arrived.notify_all();
    }

    /// Why `peer` is unreachable, or None.
    fn peer_gone(&self, peer: usize) -> Option<String> {
        self.shared.inbox.lock().unwrap().gone.get(&peer).cloned()
    }

    fn send_bytes(&self, py: Python<'_>, peer: usize, tag: u64, data: &[u8]) -> PyResult<()> {
        let data = data.to_vec();
        py.allow_threads(|| self.send_raw(peer, tag, &data))
            .map_err(Into::into)
    }

    fn recv_bytes<'py>(
        &self,
        py: Python<'py>,
        peer: usize,
        tag: u64,
        timeout_s: f64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let buf = py.allow_threads(|| self.recv_raw(peer, tag, deadline(timeout_s)))?;
        Ok(PyBytes::new(py, &buf))
    }

    /// Whether a message from `peer` with `tag` is waiting (or the peer is gone).
    fn poll(&self, peer: usize, tag: u64) -> bool {
        let inbox = self.shared.inbox.lock().unwrap();
        inbox
            .queues
            .get(&(peer, tag))
            .is_some_and(|q| !q.is_empty())
            || inbox.gone.contains_key(&peer)
    }

    fn send(
        &self,
        py: Python<'_>,
        peer: usize,
        tag: u64,
        addr: usize,
        nbytes: usize,
    ) -> PyResult<()> {
        let data = unsafe { bytes_at(addr, nbytes) };
        py.allow_threads(|| self.send_raw(peer, tag, data))
            .map_err(Into::into)
    }

    fn recv_into(
        &self,
        py: Python<'_>,
        peer: usize,
        tag: u64,
        addr: usize,
        nbytes: usize,
        timeout_s: f64,
    ) -> PyResult<()> {
        let data = unsafe { bytes_at(addr, nbytes) };
        py.allow_threads(|| self.recv_exact(peer, tag, data, deadline(timeout_s)))
            .map_err(Into::into)
    }

    /// Sends `mine` to every other rank and returns every rank's message (this rank's at its
    /// index): the header exchange that checks a collective's arguments agree.
    fn exchange(
        &self,
        py: Python<'_>,
        tag: u64,
        mine: Vec<u8>,
        timeout_s: f64,
    ) -> PyResult<Vec<Py<PyBytes>>> {
        let got = py.allow_threads(|| -> Result<Vec<Vec<u8>>, Fail> {
            let until = deadline(timeout_s);
            for p in (0..self.size).filter(|p| *p != self.rank) {
                self.send_raw(p, tag, &mine)?;
            }
            (0..self.size)
                .map(|p| {
                    if p == self.rank {
                        Ok(mine.clone())
                    } else {
                        self.recv_raw(p, tag, until)
                    }
                })
                .collect()
        })?;
        Ok(got.iter().map(|b| PyBytes::new(py, b).unbind()).collect())
    }

    /// In-place ring allreduce of a contiguous buffer of `dtype` (see `Reducer::new`). With a
    /// header (tag, bytes): None when every rank sent the same, else every rank's header.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (addr, nbytes, dtype, op, tag, timeout_s, header=None))]
    fn allreduce(
        &self,
        py: Python<'_>,
        addr: usize,
        nbytes: usize,
        dtype: &str,
        op: u8,
        tag: u64,
        timeout_s: f64,
        header: Option<(u64, Vec<u8>)>,
    ) -> PyResult<Option<Vec<Py<PyBytes>>>> {
        let red = Reducer::new(dtype, op)?;
        if !nbytes.is_multiple_of(red.esize) {
            return Err(PyValueError::new_err(
                "buffer length is not a whole number of elements",
            ));
        }
        let data = unsafe { bytes_at(addr, nbytes) };
        let head = header.as_ref().map(|(t, b)| (*t, b.as_slice()));
        let got = py.allow_threads(|| {
            self.ring_allreduce(data, red.esize, red, tag, deadline(timeout_s), head)
        })?;
        Ok(got.map(|all| all.iter().map(|b| PyBytes::new(py, b).unbind()).collect()))
    }
}

/// dst[i] = op(dst[i], src[i]) over contiguous buffers (the local step of reduce, scatter...).
#[pyfunction]
pub fn _tn_c10d_reduce_into(
    py: Python<'_>,
    dst: usize,
    src: usize,
    nbytes: usize,
    dtype: &str,
    op: u8,
) -> PyResult<()> {
    let red = Reducer::new(dtype, op)?;
    let d = unsafe { bytes_at(dst, nbytes) };
    let s = unsafe { bytes_at(src, nbytes) }.to_vec();
    py.allow_threads(|| red.apply(d, &s));
    Ok(())
}

#[derive(Clone, Copy)]
enum Kind {
    F32,
    F64,
    F16,
    BF16,
    U8,
    I8,
    I16,
    I32,
    I64,
    Bool,
}

#[derive(Clone, Copy)]
struct Reducer {
    kind: Kind,
    op: u8,
    esize: usize,
}

// c10d::ReduceOp::RedOpType values.
const SUM: u8 = 0;
const PRODUCT: u8 = 2;
const MIN: u8 = 3;
const MAX: u8 = 4;
const BAND: u8 = 5;
const BOR: u8 = 6;
const BXOR: u8 = 7;

impl Reducer {
    fn new(dtype: &str, op: u8) -> PyResult<Self> {
        let (kind, esize) = match dtype {
            "float32" => (Kind::F32, 4),
            "float64" => (Kind::F64, 8),
            "float16" => (Kind::F16, 2),
            "bfloat16" => (Kind::BF16, 2),
            "uint8" => (Kind::U8, 1),
            "int8" => (Kind::I8, 1),
            "int16" => (Kind::I16, 2),
            "int32" => (Kind::I32, 4),
            "int64" => (Kind::I64, 8),
            "bool" => (Kind::Bool, 1),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "no reduction for dtype {dtype}"
                )))
            }
        };
        let float = matches!(kind, Kind::F32 | Kind::F64 | Kind::F16 | Kind::BF16);
        match op {
            SUM | PRODUCT | MIN | MAX => {}
            BAND | BOR | BXOR if !float => {}
            _ => {
                return Err(PyValueError::new_err(format!(
                    "reduce op {op} is not supported for {dtype}"
                )))
            }
        }
        Ok(Reducer { kind, op, esize })
    }

    fn apply(&self, dst: &mut [u8], src: &[u8]) {
        macro_rules! lanes {
            ($t:ty, $f:expr) => {{
                let w = std::mem::size_of::<$t>();
                for (d, s) in dst.chunks_exact_mut(w).zip(src.chunks_exact(w)) {
                    let a = <$t>::from_le_bytes(d.try_into().unwrap());
                    let b = <$t>::from_le_bytes(s.try_into().unwrap());
                    let f: fn($t, $t) -> $t = $f;
                    d.copy_from_slice(&f(a, b).to_le_bytes());
                }
            }};
        }
        // min/max as std::min/std::max (gloo's math.h): min(a,b) = b<a ? b : a, max(a,b) = a<b ? b : a.
        macro_rules! float_ops {
            ($t:ty) => {
                match self.op {
                    SUM => lanes!($t, |a, b| a + b),
                    PRODUCT => lanes!($t, |a, b| a * b),
                    MIN => lanes!($t, |a, b| if b < a { b } else { a }),
                    _ => lanes!($t, |a, b| if a < b { b } else { a }),
                }
            };
        }
        macro_rules! int_ops {
            ($t:ty) => {
                match self.op {
                    SUM => lanes!($t, |a, b| a.wrapping_add(b)),
                    PRODUCT => lanes!($t, |a, b| a.wrapping_mul(b)),
                    MIN => lanes!($t, |a, b| if b < a { b } else { a }),
                    MAX => lanes!($t, |a, b| if a < b { b } else { a }),
                    BAND => lanes!($t, |a, b| a & b),
                    BOR => lanes!($t, |a, b| a | b),
                    _ => lanes!($t, |a, b| a ^ b),
                }
            };
        }
        // Half types: each step is computed in float and rounded back (c10::Half's operators).
        macro_rules! half_ops {
            ($t:ty) => {
                match self.op {
                    SUM => lanes!($t, |a, b| <$t>::from_f32(a.to_f32() + b.to_f32())),
                    PRODUCT => lanes!($t, |a, b| <$t>::from_f32(a.to_f32() * b.to_f32())),
                    MIN => lanes!($t, |a, b| if b.to_f32() < a.to_f32() { b } else { a }),
                    _ => lanes!($t, |a, b| if a.to_f32() < b.to_f32() { b } else { a }),
                }
            };
        }
        match self.kind {
            Kind::F32 => float_ops!(f32),
            Kind::F64 => float_ops!(f64),
            Kind::F16 => half_ops!(f16),
            Kind::BF16 => half_ops!(bf16),
            Kind::U8 => int_ops!(u8),
            Kind::I8 => int_ops!(i8),
            Kind::I16 => int_ops!(i16),
            Kind::I32 => int_ops!(i32),
            Kind::I64 => int_ops!(i64),
            Kind::Bool => {
                // bool as C++ computes it: a + b != 0, a * b != 0, min = and, max = or.
                for (d, s) in dst.iter_mut().zip(src) {
                    let (a, b) = (*d != 0, *s != 0);
                    *d = match self.op {
                        SUM | BOR | MAX => a | b,
                        PRODUCT | BAND | MIN => a & b,
                        _ => a ^ b,
                    } as u8;
                }
            }
        }
    }
}
