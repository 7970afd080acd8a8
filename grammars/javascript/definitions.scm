; Definitions in JavaScript (and JSX), besides those of ecmascript.scm.

(class_declaration name: (identifier) @name) @definition.class
(class name: (identifier) @name) @definition.class
; A field holding a function is a method; any other field a property (first pattern wins).
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method
(field_definition property: [(property_identifier) (private_property_identifier)] @name) @definition.property
