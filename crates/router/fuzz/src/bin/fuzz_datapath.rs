//! The whole datapath on any bytes (`qoslab_router::script`): sequences of
//! frames of every kind, time steps, sends the kernel refuses and reloads,
//! with every frame accounted for (rx = tx + refused + dropped by reason +
//! held) after every step and every slot back at the end; never a panic.

fn main() {
    qoslab_router_fuzz::fuzz(qoslab_router::script::run);
}
