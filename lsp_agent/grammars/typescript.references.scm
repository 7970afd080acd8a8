; TypeScript's additions to ecmascript.references.scm: annotations and interface bases.

(type_annotation) @type
(type_arguments) @type
(extends_type_clause) @inherit
