//! The textual form of Tile IR (implementation in progress).
