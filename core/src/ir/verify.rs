//! The Tile IR verifier (placeholder replaced below).
