//! The long connection. (Being written.)
