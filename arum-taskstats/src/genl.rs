//! Generic netlink, as much as taskstats needs: a message with its 4-byte family header and
//! attributes, the controller's family lookup, and acknowledged requests.

use std::io;

use netlink_packet_core::{
    DecodeError, DefaultNla, Emitable, NetlinkBuffer, NetlinkDeserializable, NetlinkHeader,
    NetlinkMessage, NetlinkPayload, NetlinkSerializable, NlaBuffer, NlasIterator, NLM_F_ACK,
    NLM_F_REQUEST,
};

use crate::socket::{for_each_message, NlSocket};

/// The generic netlink controller's fixed family id, and its command and attributes.
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
/// struct genlmsghdr: cmd, version, reserved.
const GENL_HEADER: usize = 4;

/// A generic netlink message: the family is the netlink message type; the attributes are kept
/// encoded and walked with [`Genl::attrs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Genl {
    pub family: u16,
    pub cmd: u8,
    pub version: u8,
    attrs: Vec<u8>,
}

impl NetlinkSerializable for Genl {
    fn message_type(&self) -> u16 {
        self.family
    }

    fn buffer_len(&self) -> usize {
        GENL_HEADER + self.attrs.len()
    }

    fn serialize(&self, buffer: &mut [u8]) {
        buffer[0] = self.cmd;
        buffer[1] = self.version;
        buffer[2..GENL_HEADER].fill(0);
        buffer[GENL_HEADER..].copy_from_slice(&self.attrs);
    }
}

impl NetlinkDeserializable for Genl {
    type Error = DecodeError;

    fn deserialize(header: &NetlinkHeader, payload: &[u8]) -> Result<Self, Self::Error> {
        if payload.len() < GENL_HEADER {
            return Err(DecodeError::buffer_too_small(payload.len(), GENL_HEADER));
        }
        Ok(Genl {
            family: header.message_type,
            cmd: payload[0],
            version: payload[1],
            attrs: payload[GENL_HEADER..].to_vec(),
        })
    }
}

impl Genl {
    pub fn new(family: u16, cmd: u8, version: u8, attrs: &[DefaultNla]) -> Genl {
        let mut encoded = vec![0; attrs.buffer_len()];
        attrs.emit(&mut encoded);
        Genl {
            family,
            cmd,
            version,
            attrs: encoded,
        }
    }

    /// The attributes, in order; a malformed one ends the walk.
    pub fn attrs(&self) -> impl Iterator<Item = NlaBuffer<&[u8]>> {
        NlasIterator::new(&self.attrs[..]).map_while(Result::ok)
    }

    /// The value of the first attribute of `kind`.
    pub fn attr(&self, kind: u16) -> Option<Vec<u8>> {
        self.attrs()
            .find(|a| a.kind() == kind)
            .map(|a| a.value().to_vec())
    }
}

/// A NUL-terminated string attribute.
pub(crate) fn string_attr(kind: u16, value: &str) -> DefaultNla {
    let mut bytes = value.as_bytes().to_vec();
    bytes.push(0);
    DefaultNla::new(kind, bytes)
}

/// Encodes `genl` as one netlink message.
pub(crate) fn encode(genl: Genl, flags: u16, seq: u32) -> Vec<u8> {
    let mut header = NetlinkHeader::default();
    header.flags = flags;
    header.sequence_number = seq;
    let mut message = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(genl));
    message.finalize();
    let mut bytes = vec![0; message.buffer_len()];
    message.serialize(&mut bytes);
    bytes
}

/// Sends `request` with an acknowledgement requested and waits for the kernel's answer: the
/// reply messages (for a lookup) and then the acknowledgement, or the error it carries.
pub(crate) fn request(socket: &mut NlSocket, request: Genl, seq: u32) -> io::Result<Vec<Genl>> {
    socket.send(&encode(request, NLM_F_REQUEST | NLM_F_ACK, seq))?;
    let mut replies = Vec::new();
    loop {
        let Some(datagram) = socket.recv(true)? else {
            continue;
        };
        let mut outcome: Option<io::Result<()>> = None;
        for_each_message(datagram, &mut |bytes: &[u8]| {
            let answers =
                NetlinkBuffer::new_checked(bytes).is_ok_and(|b| b.sequence_number() == seq);
            if !answers || outcome.is_some() {
                // An exit record or another unsolicited message: not the answer.
                return;
            }
            match NetlinkMessage::<Genl>::deserialize(bytes) {
                Ok(NetlinkMessage {
                    payload: NetlinkPayload::Error(e),
                    ..
                }) => {
                    outcome = Some(match e.code {
                        None => Ok(()),
                        Some(_) => Err(e.to_io()),
                    })
                }
                Ok(NetlinkMessage {
                    payload: NetlinkPayload::InnerMessage(genl),
                    ..
                }) => replies.push(genl),
                Ok(_) => {}
                Err(e) => outcome = Some(Err(io::Error::new(io::ErrorKind::InvalidData, e))),
            }
        });
        if let Some(result) = outcome {
            return result.map(|()| replies);
        }
    }
}

/// The id of generic netlink family `name`, from the controller.
pub(crate) fn family_id(socket: &mut NlSocket, name: &str) -> io::Result<u16> {
    let lookup = Genl::new(
        GENL_ID_CTRL,
        CTRL_CMD_GETFAMILY,
        1,
        &[string_attr(CTRL_ATTR_FAMILY_NAME, name)],
    );
    request(socket, lookup, 1)?
        .iter()
        .find_map(|r| r.attr(CTRL_ATTR_FAMILY_ID))
        .and_then(|v| Some(u16::from_ne_bytes(v.get(..2)?.try_into().ok()?)))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("the kernel has no {name} generic netlink family"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_survives_serialising_and_parsing() {
        let genl = Genl::new(0x1f, 1, 1, &[string_attr(3, "0-1")]);
        let bytes = encode(genl.clone(), NLM_F_REQUEST, 7);
        // nlmsghdr (16) + genlmsghdr (4) + one attribute: 4 bytes of header and "0-1\0".
        assert_eq!(bytes.len(), 16 + 4 + 8);
        assert_eq!(&bytes[16..20], &[1, 1, 0, 0]);
        let back = NetlinkMessage::<Genl>::deserialize(&bytes).unwrap();
        assert_eq!(back.header.sequence_number, 7);
        let NetlinkPayload::InnerMessage(parsed) = back.payload else {
            panic!("not an inner message")
        };
        assert_eq!(parsed, genl);
        assert_eq!(parsed.attr(3).as_deref(), Some(&b"0-1\0"[..]));
        assert_eq!(parsed.attr(4), None);
    }
}
