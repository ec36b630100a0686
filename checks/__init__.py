"""passhat.checks: executable checks on a backend's terminal state, and failure signatures."""
