//! The packet parser on any bytes: parse, and where it finds IP, write ECN
//! marks back (the two things the router does to a frame's headers), then
//! parse the result again: it must still be the same flow.

use qoslab_core::packet::Ecn;
use qoslab_router::parse::{parse, set_ecn, Frame};

fn main() {
    qoslab_router_fuzz::fuzz(|data| {
        if let Frame::Ip(info) = parse(data) {
            let mut f = data.to_vec();
            for ecn in [Ecn::Ce, Ecn::Ect1] {
                if set_ecn(&mut f, &info, ecn) {
                    match parse(&f) {
                        Frame::Ip(again) => assert_eq!(again.key, info.key, "a mark changed the flow"),
                        Frame::NotIp | Frame::Malformed => panic!("a mark made the frame unparseable"),
                    }
                }
            }
        }
    });
}
