// A frame belongs to the thread that pushed it: it is !Send.
use gatun::memory::BufferStack;

fn main() {
    let stack: &'static BufferStack = Box::leak(Box::new(BufferStack::new(64, 1).unwrap()));
    let frame = stack.push_frame(8, 8).unwrap();
    std::thread::spawn(move || {
        frame.close().unwrap();
    });
}
