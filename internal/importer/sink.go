package importer

// ImportActor is the actor an import straight into a database acts as
// (`logbook import --db`, with the admin's rights so it may write into any
// project). Sessions belong to the actor that started them, so sessions
// imported that way belong to "import": tokens of other actors can read
// them but not write to them, which suits history.
const ImportActor = "import"
