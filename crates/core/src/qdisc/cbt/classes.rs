//! The CBT class model: TCP, tagged UDP, untagged UDP ([Claypool00 §3], after
//! Parris, Jeffay & Smith 1999).
//!
//! A mechanism sees packet metadata, not headers, so the class is read from
//! the packet's [`ClassTag`], which the source (simulator) or the router's
//! header classifier sets:
//!
//! | class | meaning | default tag |
//! |---|---|---|
//! | [`Class::Tcp`] | TCP: responsive, goes straight to RED | 0 |
//! | [`Class::Tagged`] | flow-controlled multimedia UDP (the ToS/DSCP tag bit set) | 1 |
//! | [`Class::Untagged`] | other UDP (unresponsive) | 2 |
//!
//! A tag not in the map goes to [`ClassMap::unknown`]: by default the
//! untagged class, since traffic not known to be TCP or flow-controlled is
//! what CBT regulates hardest (`None` drops it as `Unclassified`).
//!
//! The paper (footnote 2) marks tagged UDP with "an unused bit of the Type
//! of Service field"; [`Class::from_header`] is that rule for a driver that
//! sees real headers (the router): TCP by protocol number, then UDP split by
//! a DSCP bit mask. The driver writes the result into `ClassTag`.

use crate::error::ConfigError;
use crate::packet::{proto, ClassTag, Packet};
use crate::qdisc::Backlog;
use std::ops::{Index, IndexMut};

/// One of CBT's three traffic classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Class {
    Tcp = 0,
    Tagged = 1,
    Untagged = 2,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Tcp, Class::Tagged, Class::Untagged];

    /// Snake-case name for result columns.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Tcp => "tcp",
            Class::Tagged => "tagged",
            Class::Untagged => "untagged",
        }
    }

    /// The class of a packet from its IP header fields: TCP by protocol
    /// number; anything else is UDP-like, tagged when `dscp & tag_mask != 0`.
    pub fn from_header(ip_proto: u8, dscp: u8, tag_mask: u8) -> Class {
        if ip_proto == proto::TCP {
            Class::Tcp
        } else if dscp & tag_mask != 0 {
            Class::Tagged
        } else {
            Class::Untagged
        }
    }
}

/// A value per class, indexed by [`Class`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerClass<T>(pub [T; 3]);

impl<T> Index<Class> for PerClass<T> {
    type Output = T;
    #[inline]
    fn index(&self, c: Class) -> &T {
        &self.0[c as usize]
    }
}

impl<T> IndexMut<Class> for PerClass<T> {
    #[inline]
    fn index_mut(&mut self, c: Class) -> &mut T {
        &mut self.0[c as usize]
    }
}

/// Packets and bytes per class, as the class averages see them.
pub type ClassBacklog = PerClass<Backlog>;

impl ClassBacklog {
    /// The sum over the classes.
    pub fn total(&self) -> Backlog {
        let mut b = Backlog::default();
        for c in &self.0 {
            b.packets += c.packets;
            b.bytes += c.bytes;
        }
        b
    }
}

/// Which [`ClassTag`] value means which class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassMap {
    pub tcp: ClassTag,
    pub tagged: ClassTag,
    pub untagged: ClassTag,
    /// The class of any other tag; `None` drops such packets (`Unclassified`).
    pub unknown: Option<Class>,
}

impl Default for ClassMap {
    fn default() -> Self {
        ClassMap { tcp: ClassTag(0), tagged: ClassTag(1), untagged: ClassTag(2), unknown: Some(Class::Untagged) }
    }
}

impl ClassMap {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let tags = [("tcp", self.tcp), ("tagged", self.tagged), ("untagged", self.untagged)];
        for (i, (name_a, a)) in tags.iter().enumerate() {
            for (name_b, b) in &tags[i + 1..] {
                if a == b {
                    return Err(ConfigError::new(
                        "cbt",
                        "classes",
                        format!("{name_a} and {name_b} share tag {}; each class needs its own tag", a.0),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The class of `pkt`, or `None` if its tag is unknown and there is no default.
    #[inline]
    pub fn classify(&self, pkt: &Packet) -> Option<Class> {
        let t = pkt.class;
        if t == self.tcp {
            Some(Class::Tcp)
        } else if t == self.tagged {
            Some(Class::Tagged)
        } else if t == self.untagged {
            Some(Class::Untagged)
        } else {
            self.unknown
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::FlowId;
    use crate::units::Time;

    fn tagged(t: u8) -> Packet {
        let mut p = Packet::new(0, FlowId(0), 1000, Time(0));
        p.class = ClassTag(t);
        p
    }

    #[test]
    fn default_map_reads_tags_zero_one_two() {
        let m = ClassMap::default();
        assert_eq!(m.classify(&tagged(0)), Some(Class::Tcp));
        assert_eq!(m.classify(&tagged(1)), Some(Class::Tagged));
        assert_eq!(m.classify(&tagged(2)), Some(Class::Untagged));
        assert_eq!(m.classify(&tagged(9)), Some(Class::Untagged));
        let strict = ClassMap { unknown: None, ..m };
        assert_eq!(strict.classify(&tagged(9)), None);
    }

    #[test]
    fn class_map_with_a_shared_tag_is_refused() {
        let m = ClassMap { untagged: ClassTag(1), ..ClassMap::default() };
        let e = m.validate().unwrap_err();
        assert_eq!(e.to_string(), "cbt.classes tagged and untagged share tag 1; each class needs its own tag");
    }

    #[test]
    fn header_rule_splits_udp_by_the_tag_bit() {
        assert_eq!(Class::from_header(proto::TCP, 0b000_001, 0b000_001), Class::Tcp);
        assert_eq!(Class::from_header(proto::UDP, 0b000_001, 0b000_001), Class::Tagged);
        assert_eq!(Class::from_header(proto::UDP, 0b101_000, 0b000_001), Class::Untagged);
    }

    #[test]
    fn class_backlog_totals_its_classes() {
        let mut b = ClassBacklog::default();
        b[Class::Tagged] = Backlog { packets: 2, bytes: 2000 };
        b[Class::Tcp] = Backlog { packets: 1, bytes: 40 };
        assert_eq!(b.total(), Backlog { packets: 3, bytes: 2040 });
    }
}
