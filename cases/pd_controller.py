"""A PD controller for the shoulder of cases/arm_beam_pd.toml, as a co-simulation FMU
source for pythonfmu (docs/cosimulation.md):

    pythonfmu build -f cases/pd_controller.py -d cases     # writes cases/PdController.fmu

τ = k_p (θ_ref − θ) − k_d θ̇ [N m] from the inputs ``angle`` [rad] and ``rate`` [rad/s]
set at the start of each communication step; parameters k_p = 20 N m/rad,
k_d = 2 N m s/rad, θ_ref = 1 rad. ``steps`` counts the steps taken (an Integer output).
"""

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Integer, Real


class PdController(Fmi2Slave):
    author = "flexmbs"
    description = "PD joint controller: tau = kp (ref - angle) - kd rate"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.angle, self.rate, self.tau = 0.0, 0.0, 0.0
        self.kp, self.kd, self.ref = 20.0, 2.0, 1.0
        self.steps = 0
        for name in ("angle", "rate"):
            self.register_variable(Real(name, causality=Fmi2Causality.input,
                                        variability=Fmi2Variability.continuous))
        self.register_variable(Real("tau", causality=Fmi2Causality.output,
                                    variability=Fmi2Variability.continuous))
        self.register_variable(Integer("steps", causality=Fmi2Causality.output,
                                       variability=Fmi2Variability.discrete))
        for name in ("kp", "kd", "ref"):
            self.register_variable(Real(name, causality=Fmi2Causality.parameter,
                                        variability=Fmi2Variability.tunable))

    def do_step(self, current_time, step_size):
        self.tau = self.kp * (self.ref - self.angle) - self.kd * self.rate
        self.steps += 1
        return True
