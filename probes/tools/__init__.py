"""Tools that build probe sets and assets: look-alike mining, easing subsets, the texture sample."""
