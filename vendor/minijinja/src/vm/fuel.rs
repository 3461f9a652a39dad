use crate::compiler::instructions::Instruction;
use crate::error::{Error, ErrorKind};
use crate::work;

/// Helper for tracking fuel consumption
///
/// promptc patch: the work instructions do inside themselves is paid for too (see
/// `crate::work`): from the thread's count of items walked since the tracker was made, one
/// unit of fuel per `PER_FUEL` items.
pub struct FuelTracker {
    // The initial fuel level.
    initial: u64,
    remaining: isize,
    /// The thread's count of items walked when the tracker was made.
    work_from: u64,
    /// The count when the render ended, after which later work is not this tracker's.
    work_until: Option<u64>,
}

impl FuelTracker {
    /// Creates a new fuel tracker.
    ///
    pub fn new(fuel: u64) -> FuelTracker {
        FuelTracker {
            initial: fuel,
            remaining: fuel as isize,
            work_from: work::done(),
            work_until: None,
        }
    }

    /// The fuel the work done so far costs.
    fn work_fuel(&self) -> isize {
        let walked = self
            .work_until
            .unwrap_or_else(work::done)
            .saturating_sub(self.work_from);
        isize::try_from(walked / work::PER_FUEL).unwrap_or(isize::MAX)
    }

    /// What is left once the work is paid for.
    fn left(&self) -> isize {
        self.remaining.saturating_sub(self.work_fuel())
    }

    /// Tracks an instruction.  If it runs out of fuel an error is returned.
    pub fn track(&mut self, instr: &Instruction) -> Result<(), Error> {
        let fuel_to_consume = fuel_for_instruction(instr);
        self.remaining -= fuel_to_consume;
        // Checked before every instruction, even one that costs nothing itself: it may be
        // the first to use what a walk cut short computed.
        if self.left() <= 0 {
            return Err(Error::from(ErrorKind::OutOfFuel));
        }
        Ok(())
    }

    /// Ends the tracking of a render: later work on the thread is not this render's. Fails
    /// when the render's work spent all of its fuel (a walk may have been cut short).
    pub(crate) fn finish(&mut self) -> Result<(), Error> {
        self.work_until.get_or_insert_with(work::done);
        if self.left() <= 0 {
            return Err(Error::from(ErrorKind::OutOfFuel));
        }
        Ok(())
    }

    /// The fuel this render may spend, as a limit on walks (see `crate::work::Scope`).
    pub(crate) fn initial(&self) -> u64 {
        self.initial
    }

    /// Returns the remaining fuel.
    pub fn remaining(&self) -> u64 {
        self.left().max(0) as u64
    }

    /// Returns the consumed fuel.
    pub fn consumed(&self) -> u64 {
        self.initial.saturating_sub(self.remaining())
    }
}

/// How much fuel does an instruction consume?
fn fuel_for_instruction(instruction: &Instruction) -> isize {
    match instruction {
        Instruction::BeginCapture(_)
        | Instruction::PushLoop(_)
        | Instruction::PushDidNotIterate
        | Instruction::PushWith
        | Instruction::PopFrame
        | Instruction::PopLoopFrame
        | Instruction::DupTop
        | Instruction::DiscardTop
        | Instruction::PushAutoEscape
        | Instruction::PopAutoEscape => 0,
        #[cfg(feature = "multi_template")]
        Instruction::ExportLocals => 0,
        #[cfg(feature = "macros")]
        Instruction::LoadBlocks | Instruction::BuildMacro(..) | Instruction::Return => 0,
        _ => 1,
    }
}
