"""Generated from protos/scorewire/v1 by scripts/generate.sh. DO NOT EDIT."""
