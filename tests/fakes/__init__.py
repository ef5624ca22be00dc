"""Stand-ins for external services, speaking their real wire protocols on loopback."""
