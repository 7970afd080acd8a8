; Definitions in Python. Each pattern captures a whole definition as @definition.<kind> and
; its @name; nesting is derived from ranges. A decorated definition is captured too, and
; being wider than the bare one, its range (decorators included) wins.

(class_definition name: (identifier) @name) @definition.class
(decorated_definition definition: (class_definition name: (identifier) @name)) @definition.class
(function_definition name: (identifier) @name) @definition.function
(decorated_definition definition: (function_definition name: (identifier) @name)) @definition.function
(type_alias_statement left: (type (identifier) @name)) @definition.type

; Module-level constants: UPPER_CASE names assigned at the top level.
(module
  (expression_statement
    (assignment left: (identifier) @name)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))
