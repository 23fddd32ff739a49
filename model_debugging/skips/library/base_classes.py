"""The names of the library's base classes, which the facts of every model and configuration end at."""

# The base model class.
BASE_MODEL = "PreTrainedModel"
# The base configuration class: `PreTrainedConfig`, spelled `PretrainedConfig` before transformers 5.
BASE_CONFIGS = frozenset({"PreTrainedConfig", "PretrainedConfig"})
