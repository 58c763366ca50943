"""Throughput benchmarks of the MCP endpoint against the host's own REST and Django views."""
