//! The baseline policies every Hadoop user knows, FIFO and Fair, expressed as plan targets like every
//! other policy so the one assignment layer serves them all. They live in the core because the engine's
//! own tests and any host without the research policies need a policy to run.

pub mod fair;
pub mod fifo;
