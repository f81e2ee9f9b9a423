//! A GDB remote serial protocol client: the few packets a debug probe's host needs to read
//! and write target memory while the target runs — `?`, `c`, the interrupt byte (0x03), `m`
//! (read memory) and `M` (write memory). QEMU's gdbstub speaks it; so do OpenOCD and
//! probe-rs' GDB servers over SWD.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A connection to a gdbstub.
pub struct Gdb {
    stream: TcpStream,
    buf: Vec<u8>,
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

impl Gdb {
    /// Connect to `addr` (retrying for a few seconds while the stub starts) and ask why the
    /// target stopped (QEMU started with `-S` waits, stopped).
    pub fn connect(addr: &str) -> io::Result<Gdb> {
        let mut last = None;
        for _ in 0..100 {
            match TcpStream::connect(addr) {
                Ok(stream) => {
                    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
                    stream.set_nodelay(true)?;
                    let mut g = Gdb { stream, buf: Vec::new() };
                    g.send("?")?;
                    g.reply()?;
                    return Ok(g);
                }
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(last.unwrap_or_else(|| io::ErrorKind::TimedOut.into()))
    }

    fn send(&mut self, packet: &str) -> io::Result<()> {
        let sum = packet.bytes().fold(0u8, |s, b| s.wrapping_add(b));
        write!(self.stream, "${packet}#{sum:02x}")
    }

    /// The next packet from the stub (acknowledged; the stub's own `+` acks are skipped).
    fn reply(&mut self) -> io::Result<String> {
        loop {
            if let Some(start) = self.buf.iter().position(|&b| b == b'$') {
                if let Some(hash) = self.buf[start..].iter().position(|&b| b == b'#').map(|h| start + h) {
                    if self.buf.len() >= hash + 3 {
                        let body = String::from_utf8_lossy(&self.buf[start + 1..hash]).into_owned();
                        self.buf.drain(..hash + 3);
                        self.stream.write_all(b"+")?;
                        return Ok(body);
                    }
                }
            }
            let mut chunk = [0u8; 4096];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Let the target run (`c`); its stop reply comes after [`Gdb::interrupt`].
    pub fn resume(&mut self) -> io::Result<()> {
        self.send("c")
    }

    /// Stop the running target (the interrupt byte) and wait for its stop reply.
    pub fn interrupt(&mut self) -> io::Result<()> {
        self.stream.write_all(&[0x03])?;
        let r = self.reply()?;
        if r.starts_with('T') || r.starts_with('S') {
            Ok(())
        } else {
            Err(invalid(format!("stop reply {r:?}")))
        }
    }

    /// Read `len` bytes of target memory at `addr` (in packets of at most 1 KiB).
    pub fn read(&mut self, addr: u32, len: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let n = (len - out.len()).min(1024);
            self.send(&format!("m{:x},{n:x}", addr as usize + out.len()))?;
            let r = self.reply()?;
            if r.len() != 2 * n || r.starts_with('E') {
                return Err(invalid(format!("memory read at {addr:#x}: {r:?}")));
            }
            for i in 0..n {
                let byte = u8::from_str_radix(&r[2 * i..2 * i + 2], 16).map_err(|_| invalid(r.clone()))?;
                out.push(byte);
            }
        }
        Ok(out)
    }

    /// Write `bytes` to target memory at `addr`.
    pub fn write(&mut self, addr: u32, bytes: &[u8]) -> io::Result<()> {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.send(&format!("M{addr:x},{:x}:{hex}", bytes.len()))?;
        match self.reply()?.as_str() {
            "OK" => Ok(()),
            r => Err(invalid(format!("memory write at {addr:#x}: {r:?}"))),
        }
    }
}
