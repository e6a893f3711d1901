"""Host tool for Bulkhead: validates a YAML system description, packs the boot image, and shows
schedules and traces.

Layers, each in its own module:
  yamlsrc   YAML text -> PyYAML nodes (positions kept)
  reader    nodes -> model objects (types and structure)
  checks    model -> diagnostics (values, layout, images); scheduling: the schedule section's checks
  config    the load()/check() entry points tying those together
  emit_c, emit_images, build, qemu   outputs for a checked model
  plan      `bulkhead plan`: a plan as text, PNG (timeline) or trace JSON (chrome)
  trace     `bulkhead trace`: BHTRACE lines of a console log -> TraceData -> trace JSON or PNG
"""

__version__ = "0.1.0"
