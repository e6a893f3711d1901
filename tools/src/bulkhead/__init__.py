"""Host tool for Bulkhead: validates a YAML system description and packs the boot image.

Layers, each in its own module:
  yamlsrc   YAML text -> PyYAML nodes (positions kept)
  reader    nodes -> model objects (types and structure)
  checks    model -> diagnostics (values, layout, images)
  config    the load()/check() entry points tying those together
  emit_c, emit_images, build, qemu   outputs for a checked model
"""

__version__ = "0.1.0"
