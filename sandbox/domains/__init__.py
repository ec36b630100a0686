"""The domains shipped with passhat; each registers itself in the `passhat.domains` entry-point group."""
